"""A local OTLP/HTTP receiver for tests: collects the spans exporters POST to /v1/traces."""

from __future__ import annotations

import gzip
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.support.live import free_port


class Span:
    """One received span, with hex ids and plain attributes."""

    def __init__(self, span, resource: dict):
        self.name = span.name
        self.kind = span.kind  # opentelemetry.proto.trace.v1.Span.SpanKind
        self.trace_id = span.trace_id.hex()
        self.span_id = span.span_id.hex()
        self.parent_id = span.parent_span_id.hex()
        self.attributes = _attributes(span.attributes)
        self.resource = resource

    def __repr__(self):
        return f"<Span {self.name} kind={self.kind} parent={self.parent_id}>"


def _attributes(pairs) -> dict:
    return {kv.key: getattr(kv.value, kv.value.WhichOneof("value")) for kv in pairs}


class OtlpReceiver:
    def __init__(self):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.spans: list[Span] = []
        self.paths: list[str] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                receiver.paths.append(self.path)
                request = ExportTraceServiceRequest.FromString(body)
                for resource_spans in request.resource_spans:
                    resource = _attributes(resource_spans.resource.attributes)
                    for scope in resource_spans.scope_spans:
                        receiver.spans.extend(Span(span, resource) for span in scope.spans)
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> OtlpReceiver:
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def wait_for(self, predicate, timeout: float = 20) -> list[Span]:
        """The spans once `predicate(spans)` holds (exporters send in batches)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate(self.spans):
                return list(self.spans)
            time.sleep(0.1)
        raise AssertionError(f"spans did not arrive: {self.spans}")
