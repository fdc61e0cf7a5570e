// Consumes one server stream with a stock @connectrpc/connect-node client (its default
// transport options), for tests/workloads/test_streams_interop.py.
//
// Reads one JSON plan on stdin:
//   {baseUrl, gen, protocol: "connect" | "grpcweb", binary, procedure: "pkg.Service/Method",
//    request: {...proto JSON}, token, stopAfter?}
// and prints one JSON line per message as it arrives ({"message": ...}), then {"end": true}
// or {"error": {code, message}}. With `stopAfter` it leaves the stream after that many
// messages (the client goes away mid-stream).
import { readdir } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

import { fromJson, toJson } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";

async function service(dir, typeName) {
  const entries = await readdir(dir, { recursive: true });
  for (const file of entries.filter((entry) => entry.endsWith("_pb.js"))) {
    const module = await import(pathToFileURL(join(dir, file)).href);
    for (const value of Object.values(module)) {
      if (value && value.kind === "service" && value.typeName === typeName) return value;
    }
  }
  throw new Error(`no service ${typeName}`);
}

function print(line) {
  process.stdout.write(JSON.stringify(line) + "\n");
}

async function main() {
  const plan = JSON.parse(readFileSync(0, "utf8"));
  const [serviceName, methodName] = plan.procedure.split("/");
  const svc = await service(plan.gen, serviceName);
  const method = svc.methods.find((m) => m.name === methodName);
  const options = { baseUrl: plan.baseUrl, httpVersion: "1.1", useBinaryFormat: plan.binary };
  const transport = plan.protocol === "grpcweb" ? createGrpcWebTransport(options) : createConnectTransport(options);
  const client = createClient(svc, transport);
  const abort = new AbortController();
  let seen = 0;
  try {
    const stream = client[method.localName](fromJson(method.input, plan.request), {
      headers: { authorization: `Bearer ${plan.token}` },
      signal: abort.signal,
    });
    for await (const message of stream) {
      print({ message: toJson(method.output, message) });
      seen += 1;
      if (plan.stopAfter && seen >= plan.stopAfter) {
        abort.abort();
        print({ left: true });
        return;
      }
    }
    print({ end: true });
  } catch (error) {
    const connectError = ConnectError.from(error);
    const code = Code[connectError.code].replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
    print({ error: { code, message: connectError.rawMessage } });
  }
}

await main();
