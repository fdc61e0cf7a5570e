"""Traces with an in-memory exporter: a server span per RPC with the RPC semantic-convention
attributes, its SQL statements as child spans, all under the caller's traceparent."""

from __future__ import annotations

import pytest
from django.db import connection
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from controlplane.auth import Role
from controlplane.observability import tracing
from tests.support.uploads_factory import LIST, add, make_bucket, record

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
PARENT_ID = "b7ad6b7169203331"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"


@pytest.fixture
def spans(transactional_db):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.setup(provider)
    fresh_connections()  # made through the instrumented driver
    yield exporter
    fresh_connections()
    tracing.teardown()


def fresh_connections() -> None:
    connection.close()
    if getattr(connection, "pool", None) is not None:
        connection.close_pool()  # its connections were made before the driver was instrumented


def test_list_uploads_has_a_server_span_with_sql_children_under_the_callers_trace(spans, rpc, namespace, make_key):
    bucket = make_bucket()
    add(bucket, [record(1), record(2)])
    key = make_key("team-a", Role.VIEWER)
    spans.clear()

    result = rpc(LIST, {"bucket": {"bucketId": str(bucket.pk)}}, token=key, headers={"traceparent": TRACEPARENT})

    assert result.status == 200, result
    finished = spans.get_finished_spans()
    server = [s for s in finished if s.kind is SpanKind.SERVER]
    assert len(server) == 1
    span = server[0]
    assert span.name == "uploads.api.v1.BucketUploadsService/ListUploads"
    assert format(span.context.trace_id, "032x") == TRACE_ID
    assert format(span.parent.span_id, "016x") == PARENT_ID and span.parent.is_remote
    attributes = dict(span.attributes)
    assert attributes["rpc.system"] == "connect_rpc"
    assert attributes["rpc.system.name"] == "connectrpc"  # connectrpc-otel's (current conventions)
    assert attributes["rpc.service"] == "uploads.api.v1.BucketUploadsService"
    assert attributes["rpc.method"] == "uploads.api.v1.BucketUploadsService/ListUploads"
    assert attributes["controlplane.principal.kind"] == "api_key"
    assert "rpc.connect_rpc.error_code" not in attributes
    # No credential in any attribute of any span.
    for each in finished:
        assert key not in repr(dict(each.attributes))
    sql = [s for s in finished if s.kind is SpanKind.CLIENT and s.parent and s.parent.span_id == span.context.span_id]
    assert len(sql) >= 2, [s.name for s in finished]  # the key lookup and the listing at least
    assert {s.attributes["db.system"] for s in sql} == {connection.vendor}


def test_a_refused_call_carries_its_connect_code_and_namespace(spans, rpc, namespace, make_key):
    key = make_key("team-a", Role.VIEWER)  # GetNamespace is for admins
    result = rpc("containers.api.v1.NamespaceService/GetNamespace", {"namespace": "team-a"}, token=key)
    assert result.status == 403
    (span,) = [s for s in spans.get_finished_spans() if s.kind is SpanKind.SERVER]
    assert span.attributes["rpc.connect_rpc.error_code"] == "permission_denied"
    assert span.attributes["rpc.response.status_code"] == "permission_denied"
    assert span.attributes["controlplane.namespace"] == "team-a"
    assert span.status.status_code is trace.StatusCode.ERROR


def test_tracing_is_off_unless_otel_variables_ask_for_it():
    assert not tracing.configured({})
    assert not tracing.configured({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:4318"})
    assert not tracing.configured({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"})
    assert tracing.configured({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
    assert tracing.configured({"OTEL_TRACES_EXPORTER": "console"})
