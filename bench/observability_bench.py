#!/usr/bin/env python
"""What observability costs on a cheap RPC: GetNamespace with an ADMIN key through the whole
WSGI stack, in-process, under four configurations side by side, interleaved in blocks:

- off: no request observation (middleware and RPC interceptors of controlplane.observability
  bypassed), no tracing, no request log; the always-on counters inside authentication, the key
  cache and the pool still count (a few hundred nanoseconds);
- metrics: the default (request id, statements, RPC metrics);
- metrics+logs: plus one JSON line per request (LOG_FORMAT=json's formatter, to /dev/null);
- metrics+logs+tracing: plus a server span and SQL spans per call, sampled at 100%, batched
  to an OTLP/HTTP exporter whose collector is a sink in another process.

Prints p50/p95 per configuration and the ratio to `off`. Then the same four over HTTP, as a
client sees them: one gunicorn per configuration (deploy/gunicorn.conf.py: sync, metrics in
multiprocess mode; one worker), a new connection per call, in runs of calls to one server at
a time; p50/p95 at the client, and the worker process's CPU per call (all its threads: the
span exporter's too).

Goals (issue 21): metrics+logs add at most 5% to p50; with tracing at most 15%. Judged both
in-process (this thread's CPU: the stricter view, without gunicorn's own work in the base) and
over HTTP (the latency a client sees). Runs on PostgreSQL (DATABASE_URL) in a throwaway
database `cp_obench_<name>`. Exit status: 0 every goal met, 1 one missed, 2 cannot run.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import logging
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import connect_caller, percentile, production_like_environment, throwaway_database  # noqa: E402

PROCEDURE = "/containers.api.v1.NamespaceService/GetNamespace"
NAMESPACE = "bench"
CONFIGURATIONS = ("off", "metrics", "metrics+logs", "metrics+logs+tracing")
GOALS = {"metrics+logs": 1.05, "metrics+logs+tracing": 1.15}
# An OTLP/HTTP collector that accepts and drops every export, in its own process (as a
# collector would be), so its work does not share this process's interpreter.
SINK = """
import http.server, sys
class Sink(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *args): pass
server = http.server.HTTPServer(("127.0.0.1", 0), Sink)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=4000, help="timed calls per configuration")
    parser.add_argument("--blocks", type=int, default=20, help="interleaved blocks the calls are split into")
    parser.add_argument("--http-calls", type=int, default=2000, help="timed HTTP calls per configuration (0: none)")
    parser.add_argument("--allow-sqlite", action="store_true", help="run on SQLite anyway (figures not comparable)")
    return parser.parse_args(argv)


def seed() -> str:
    from apikeys.services import issue_api_key
    from controlplane.auth import Principal, Role
    from namespaces.services import create_namespace

    actor = Principal.system("bench")
    create_namespace(actor=actor, name=NAMESPACE)
    _, plaintext = issue_api_key(actor=actor, namespace=NAMESPACE, name="bench admin", role=Role.ADMIN)
    return plaintext


def fresh_connections() -> None:
    """New database connections, made through the driver as (un)instrumented now."""
    from django.db import connection

    connection.close()
    if getattr(connection, "pool", None) is not None:
        connection.close_pool()


class Switch:
    """Turns each configuration on in this process (and everything else off)."""

    def __init__(self, collector: str):
        from django.conf import settings

        from controlplane.observability import logs

        self.settings = settings
        self.collector = collector
        # The JSON request line, as LOG_FORMAT=json writes it, to a stream nobody reads.
        self.devnull = open(os.devnull, "w")  # noqa: SIM115 - closed in close()
        self.handler = logging.StreamHandler(self.devnull)
        self.handler.setFormatter(logs.JsonFormatter())
        self.handler.addFilter(logs.RequestContext())
        self.request_logger = logging.getLogger("controlplane.request")
        self.provider = None
        self.spans = span_counter()

    def set(self, name: str) -> None:
        from controlplane.observability import tracing

        tracing.teardown()
        if self.provider is not None:
            self.provider.shutdown()
            self.provider = None
        observe_requests(name != "off")
        self.settings.LOG_REQUESTS = "logs" in name
        self.request_logger.handlers = [self.handler] if "logs" in name else []
        self.request_logger.propagate = "logs" not in name
        self.request_logger.setLevel(logging.INFO)
        if "tracing" in name:
            tracing.setup(self.tracer_provider())
        fresh_connections()

    def tracer_provider(self):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from opentelemetry.sdk.trace.sampling import ALWAYS_ON

        self.provider = TracerProvider(sampler=ALWAYS_ON)
        self.provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{self.collector}/v1/traces")))
        self.provider.add_span_processor(self.spans)
        return self.provider

    def close(self) -> None:
        self.set("metrics")
        self.devnull.close()


def span_counter():
    """A span processor that counts the spans ended (to show what tracing exported)."""
    from opentelemetry.sdk.trace import SpanProcessor

    class Counting(SpanProcessor):
        ended = 0

        def on_end(self, span):
            self.ended += 1

    return Counting()


def _passthrough(self, request):
    return self.get_response(request)


_ORIGINAL_CALL = None
_ORIGINAL_CHAIN = None


def observe_requests(on: bool) -> None:
    """On: as configured. Off: the observation middleware passes the request through, and the
    RPC chain lacks the observing interceptors (rpc/observing.py), as declared otherwise."""
    global _ORIGINAL_CALL, _ORIGINAL_CHAIN
    from django.conf import settings

    from controlplane.observability import requests
    from controlplane.rpc.registry import registry

    if _ORIGINAL_CALL is None:
        _ORIGINAL_CALL, _ORIGINAL_CHAIN = requests.ObservabilityMiddleware.__call__, list(settings.RPC_INTERCEPTORS)
    requests.ObservabilityMiddleware.__call__ = _ORIGINAL_CALL if on else _passthrough
    settings.RPC_INTERCEPTORS = [p for p in _ORIGINAL_CHAIN if on or ".observing." not in p]
    registry.reset()


def measure(call, switch: Switch, iterations: int, blocks: int) -> tuple[dict, dict]:
    """Per configuration: wall-clock and CPU ns per call. CPU time is this thread's: the work on
    the request's path (a span exporter's thread works off it, as a collector's process would)."""
    samples = {name: [] for name in CONFIGURATIONS}
    cpu = {name: [] for name in CONFIGURATIONS}
    paired = {name: [] for name in CONFIGURATIONS}  # per block: CPU p50 / off's CPU p50
    process = {name: 0 for name in CONFIGURATIONS}  # CPU ns of every thread (the log writer's too)
    per_block = max(1, iterations // blocks)
    for _ in range(blocks):
        block = {}
        for name in CONFIGURATIONS:
            switch.set(name)
            for _ in range(20):  # warm: connections, the key cache, the label children
                status, body = call()
                assert status.startswith("200"), (status, body[:200])
            block[name] = []
            process_started = time.process_time_ns()
            for _ in range(per_block):
                started, started_cpu = time.perf_counter_ns(), time.thread_time_ns()
                call()
                samples[name].append(time.perf_counter_ns() - started)
                block[name].append(time.thread_time_ns() - started_cpu)
            process[name] += time.process_time_ns() - process_started
            cpu[name].extend(block[name])
        for name in CONFIGURATIONS:
            paired[name].append(statistics.median(block[name]) / statistics.median(block["off"]))
    return samples, cpu, paired, process


# Over HTTP, each configuration is its own gunicorn, as deployed (deploy/gunicorn.conf.py:
# sync, metrics in multiprocess mode) with one worker and no recycling, so that one process's
# CPU is each configuration's; the `off` one runs bench/observability_wsgi.py.
HTTP_RUN, HTTP_SETTLE = 50, 5  # calls timed per turn of a server, after this many untimed


def server_settings(name: str, collector: str) -> tuple[str, dict[str, str]]:
    env = {"LOG_LEVEL": "WARNING", "LOG_FORMAT": "plain", "LOG_REQUESTS": "false", "OTEL_SDK_DISABLED": "true"}
    if name == "off":
        env["BENCH_OBSERVATION"] = "off"
    if "logs" in name:
        env.update(LOG_LEVEL="INFO", LOG_FORMAT="json", LOG_REQUESTS="true")
    if "tracing" in name:
        env.update(
            OTEL_SDK_DISABLED="false",
            OTEL_EXPORTER_OTLP_ENDPOINT=collector,
            OTEL_TRACES_SAMPLER="always_on",
            OTEL_SERVICE_NAME="observability-bench",
        )
    return "bench.observability_wsgi", env


def process_cpu_ns(pid: int) -> int:
    """CPU time of every thread of `pid` so far (the span exporter's and the pool's included)."""
    total = 0
    for stat in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        with contextlib.suppress(OSError):
            total += int(stat.read_text().split()[0])
    return total


def worker_pid(master: int) -> int:
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    if len(children) != 1:
        raise SystemExit(f"expected one gunicorn worker under {master}, found {children}")
    return int(children[0])


def measure_http(database_url: str, collector: str, token: str, calls: int, blocks: int):
    """Per configuration: client-side latency (ns) of GetNamespace over a new connection per
    call, the servers taken in turn call by call; the worker's CPU per call; and per block the
    ratio of each p50 to off's."""
    from tests.support.live import ServiceProcess

    body = json.dumps({"namespace": NAMESPACE})
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    servers = {}
    try:
        for name in CONFIGURATIONS:
            app, env = server_settings(name, collector)
            servers[name] = ServiceProcess(
                env={"DATABASE_URL": database_url, "DATABASE_POOL": "true", **env},
                workers=1,
                app=app,
                args=("--config", str(ROOT / "deploy" / "gunicorn.conf.py"), "--max-requests", "0"),
            ).start()

        def call(port):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            try:
                connection.request("POST", PROCEDURE, body=body, headers=headers)
                response = connection.getresponse()
                response.read()
                if response.status != 200:
                    raise SystemExit(f"{PROCEDURE} answered HTTP {response.status} over HTTP")
                return response.getheader("X-Request-Id")
            finally:
                connection.close()

        ports = {name: server.port for name, server in servers.items()}
        workers = {name: worker_pid(server.process.pid) for name, server in servers.items()}
        for _ in range(100):  # warm: the worker's imports, connections, the key cache
            for port in ports.values():
                call(port)
        for name, port in ports.items():  # each server observes as its configuration says
            if (call(port) is None) != (name == "off"):
                raise SystemExit(f"the {name!r} server's answer has the wrong X-Request-Id for its configuration")
        samples = {name: [] for name in CONFIGURATIONS}
        paired = {name: [] for name in CONFIGURATIONS}
        cpu = {name: 0 for name in CONFIGURATIONS}
        per_block = max(1, calls // blocks)
        for _ in range(blocks):
            block = {name: [] for name in CONFIGURATIONS}
            # Runs of calls to one server at a time: one server per call would make every call
            # cold (the other workers evict its caches), doubling everyone's cost alike. The
            # first calls of a run, still cold, are left out.
            for _ in range(max(1, per_block // HTTP_RUN)):
                for name, port in ports.items():
                    for _ in range(HTTP_SETTLE):
                        call(port)
                    cpu_started = process_cpu_ns(workers[name])
                    for _ in range(HTTP_RUN):
                        started = time.perf_counter_ns()
                        call(port)
                        block[name].append(time.perf_counter_ns() - started)
                    cpu[name] += process_cpu_ns(workers[name]) - cpu_started
            for name in CONFIGURATIONS:
                samples[name].extend(block[name])
                paired[name].append(statistics.median(block[name]) / statistics.median(block["off"]))
        cpu = {name: cpu[name] / len(samples[name]) for name in CONFIGURATIONS}
    finally:
        for server in servers.values():
            server.stop()
    return samples, cpu, paired


def database_url(name: str) -> str:
    from django.db import connection

    if connection.vendor == "sqlite":
        return f"sqlite:///{name}"
    return urlsplit(os.environ["DATABASE_URL"])._replace(path=f"/{name}").geturl()


@contextlib.contextmanager
def sink_process():
    process = subprocess.Popen([sys.executable, "-c", SINK], stdout=subprocess.PIPE, text=True)
    try:
        yield f"http://127.0.0.1:{process.stdout.readline().strip()}"
    finally:
        process.terminate()
        process.wait(10)


def main(argv=None) -> int:
    args = parse_args(argv)
    production_like_environment()
    import django

    django.setup()
    from django.db import connection

    with throwaway_database("cp_obench", args.allow_sqlite) as usable:
        if not usable:
            return 2
        token = seed()
        call = connect_caller(PROCEDURE, token, {"namespace": NAMESPACE})
        with sink_process() as collector:
            switch = Switch(collector)
            try:
                samples, cpu, paired, process = measure(call, switch, args.iterations, args.blocks)
                traced_calls = args.blocks * (20 + max(1, args.iterations // args.blocks))
                spans_per_call = switch.spans.ended / traced_calls
            finally:
                switch.close()
            http = None
            if args.http_calls > 0:
                http = measure_http(database_url(usable), collector, token, args.http_calls, args.blocks)

    title = (
        f"Observability benchmark — GetNamespace in-process, {connection.vendor}, Python "
        f"{platform.python_version()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )
    print(title)
    print("-" * len(title))
    print(f"{'configuration':<22}  {'p50 µs':>8}  {'p95 µs':>8}  {'vs off':>7}  {'CPU p50 µs':>10}  {'vs off':>7}")
    wall_base, cpu_base = statistics.median(samples["off"]), statistics.median(cpu["off"])
    for name in CONFIGURATIONS:
        p50, cpu50 = statistics.median(samples[name]), statistics.median(cpu[name])
        p95 = percentile(samples[name], 0.95)
        print(
            f"{name:<22}  {p50 / 1000:8.1f}  {p95 / 1000:8.1f}  {p50 / wall_base:6.3f}x  "
            f"{cpu50 / 1000:10.1f}  {cpu50 / cpu_base:6.3f}x"
        )
    print(f"spans exported per traced call: {spans_per_call:.1f} (the server span and its SQL)")
    shares = ", ".join(f"{name} {process[name] / process['off']:.3f}x" for name in CONFIGURATIONS[1:])
    print(f"CPU of the whole process (every thread: log writer, span exporter) vs off: {shares}")
    if http is not None:
        http_samples, http_cpu, http_paired = http
        heading = "over HTTP: gunicorn (deploy/gunicorn.conf.py, one sync worker), a new connection per call"
        print(f"\n{heading}")
        columns = ("p50 µs", 8), ("p95 µs", 8), ("vs off", 7), ("worker CPU µs", 13), ("vs off", 7)
        print(f"{'configuration':<22}" + "".join(f"  {title:>{width}}" for title, width in columns))
        for name in CONFIGURATIONS:
            p50 = statistics.median(http_samples[name])
            print(
                f"{name:<22}  {p50 / 1000:8.1f}  {percentile(http_samples[name], 0.95) / 1000:8.1f}  "
                f"{statistics.median(http_paired[name]):6.3f}x  {http_cpu[name] / 1000:13.1f}  "
                f"{http_cpu[name] / http_cpu['off']:6.3f}x"
            )
    print()
    # The verdict uses CPU time: on a machine shared with other work, wall-clock time also
    # counts the waits for a core, which have nothing to do with this code. Both are printed.
    # And each configuration is compared with `off` block by block (the median of the blocks'
    # ratios), so that drifts in the machine's load between blocks cancel out.
    passed = True
    for name, goal in GOALS.items():
        ratio = statistics.median(paired[name])
        wall = statistics.median(samples[name]) / wall_base
        passed = passed and ratio <= goal
        print(
            f"[{'PASS' if ratio <= goal else 'FAIL'}] {name}: CPU p50 {ratio:.3f}x off (paired), "
            f"{(ratio - 1) * 100:+.1f}% (goal ≤ +{(goal - 1) * 100:.0f}%; wall-clock p50 {wall:.3f}x)"
        )
    if http is not None:
        for name, goal in GOALS.items():
            ratio = statistics.median(http_paired[name])
            passed = passed and ratio <= goal
            print(
                f"[{'PASS' if ratio <= goal else 'FAIL'}] {name} over HTTP: p50 {ratio:.3f}x off (paired), "
                f"{(ratio - 1) * 100:+.1f}% (goal ≤ +{(goal - 1) * 100:.0f}%; worker CPU per call "
                f"{http_cpu[name] / http_cpu['off']:.3f}x)"
            )
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
