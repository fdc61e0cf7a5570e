"""gunicorn with JSON logs and traces exported over OTLP/HTTP to a receiver in the test: the
caller's traceparent (sent by hand, and by the SDK) is honoured, SQL spans hang under the
server span, and the request lines carry the request id, the trace id and no credential."""

from __future__ import annotations

import json
import urllib.request

import pytest
from cpsdk import AdminClient
from django.db import connection
from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan
from opentelemetry.sdk.trace import TracerProvider

from controlplane.auth import Role
from tests.support.live import ServiceProcess
from tests.support.uploads_factory import LIST, add, make_bucket, record

from .otlp import OtlpReceiver

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
COOKIE_VALUE = "session-cookie-value-never-logged"
SERVER, CLIENT = ProtoSpan.SpanKind.SPAN_KIND_SERVER, ProtoSpan.SpanKind.SPAN_KIND_CLIENT


@pytest.mark.e2e
def test_traces_over_otlp_and_json_request_logs(transactional_db, namespace, make_key):
    admin, viewer = make_key("team-a", Role.ADMIN), make_key("team-a", Role.VIEWER)
    bucket = make_bucket()
    add(bucket, [record(1), record(2)])
    with OtlpReceiver() as receiver:
        env = {
            "LOG_FORMAT": "json",
            "TRUSTED_PROXIES": "127.0.0.1",  # the test plays the proxy: its X-Request-Id is kept
            "OTEL_TRACES_EXPORTER": "otlp",
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
            "OTEL_BSP_SCHEDULE_DELAY": "100",
            "OTEL_SERVICE_NAME": "controlplane-test",
        }
        service = ServiceProcess(env=env, workers=2).start()
        try:
            request = urllib.request.Request(
                f"{service.url}/{LIST}",
                data=json.dumps({"bucket": {"bucketId": str(bucket.pk)}}).encode(),
                headers={
                    "Authorization": f"Bearer {viewer}",
                    "Content-Type": "application/json",
                    "traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01",
                    "X-Request-Id": "proxy-request-1",
                    "Cookie": f"cp_session={COOKIE_VALUE}",
                },
            )
            with urllib.request.urlopen(request, timeout=10) as response:
                assert response.status == 200
                assert response.headers["X-Request-Id"] == "proxy-request-1"

            # The SDK passes on the trace of the span current where it is called (its HTTP client,
            # pyqwest, injects traceparent through the OpenTelemetry API it depends on).
            tracer = TracerProvider().get_tracer("test")
            with (
                tracer.start_as_current_span("client operation") as client_span,
                AdminClient(service.url, api_key=admin) as client,
            ):
                assert client.get_namespace("team-a").namespace == "team-a"
            sdk_trace = format(client_span.get_span_context().trace_id, "032x")
            sdk_parent = format(client_span.get_span_context().span_id, "016x")

            spans = receiver.wait_for(
                lambda spans: {s.trace_id for s in spans if s.kind == SERVER} >= {TRACE_ID, sdk_trace}
            )
        finally:
            service.stop()
    assert receiver.paths and set(receiver.paths) == {"/v1/traces"}

    (listing,) = [s for s in spans if s.kind == SERVER and s.trace_id == TRACE_ID]
    assert listing.parent_id == PARENT_ID
    assert listing.resource["service.name"] == "controlplane-test"
    assert listing.attributes["rpc.system"] == "connect_rpc"
    assert listing.attributes["rpc.service"] == "uploads.api.v1.BucketUploadsService"
    assert listing.attributes["rpc.method"] == "uploads.api.v1.BucketUploadsService/ListUploads"
    assert listing.attributes["controlplane.principal.kind"] == "api_key"
    sql = [s for s in spans if s.kind == CLIENT and s.parent_id == listing.span_id]
    assert len(sql) >= 2 and {s.attributes["db.system"] for s in sql} == {connection.vendor}, spans
    assert all(s.trace_id == TRACE_ID for s in sql)

    (by_sdk,) = [s for s in spans if s.kind == SERVER and s.trace_id == sdk_trace]
    assert by_sdk.parent_id == sdk_parent
    assert by_sdk.name == "containers.api.v1.NamespaceService/GetNamespace"
    assert by_sdk.attributes["controlplane.namespace"] == "team-a"

    log = service.log()
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    requests = {line["request_id"]: line for line in lines if line["logger"] == "controlplane.request"}
    listed = requests["proxy-request-1"]
    assert (listed["procedure"], listed["code"], listed["trace_id"]) == (f"{LIST}", "ok", TRACE_ID)
    assert listed["statements"] >= 2 and listed["principal"].startswith("api_key:key_")
    (sdk_line,) = [line for line in requests.values() if line["trace_id"] == sdk_trace]
    assert sdk_line["namespace"] == "team-a" and sdk_line["code"] == "ok"
    for secret in (admin, viewer, COOKIE_VALUE, "Bearer "):
        assert secret not in log
    for span in spans:
        assert not any(secret in str(value) for value in span.attributes.values() for secret in (admin, viewer))
