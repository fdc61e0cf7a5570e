"""JSON logs: one line per request with its id (also in the X-Request-Id header), errors once
with their traceback, and never a credential."""

from __future__ import annotations

import io
import json
import logging
from datetime import UTC, datetime

import pytest
from django.db import connection

from controlplane.auth import Principal, Role
from controlplane.observability import logs
from controlplane.observability.requests import request_id
from tests.support.streams import stream_call
from tests.support.testing_service import PATH, TESTING_SERVICE
from workloads.models import Job
from workloads.services.jobs import run_job

COOKIE = "cp_session=cookie-value-that-must-not-be-logged"


def json_console() -> tuple[io.StringIO, logging.StreamHandler]:
    """LOG_FORMAT=json's console handler, writing to a string."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logs.JsonFormatter())
    handler.addFilter(logs.RequestContext())
    return stream, handler


@pytest.fixture
def json_lines(settings):
    """The JSON lines the root logger writes while the test runs (LOG_FORMAT=json's handler)."""
    settings.LOG_REQUESTS = True
    stream, handler = json_console()
    root = logging.getLogger()
    root.addHandler(handler)
    level = root.level
    root.setLevel(logging.INFO)
    yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    root.removeHandler(handler)
    root.setLevel(level)


def test_one_line_per_request_with_the_id_of_the_response_header(json_lines, rpc, admin_key):
    result = rpc("containers.api.v1.NamespaceService/GetNamespace", {"namespace": "team-a"}, token=admin_key)
    assert result.status == 200
    (line,) = [line for line in json_lines() if line["logger"] == "controlplane.request"]
    assert line["request_id"] == result.response["X-Request-Id"]
    assert line["procedure"] == "containers.api.v1.NamespaceService/GetNamespace"
    assert (line["code"], line["status"], line["namespace"]) == ("ok", 200, "team-a")
    assert line["principal"].startswith("api_key:key_")
    assert line["statements"] >= 1 and line["response_bytes"] == len(result.raw) and line["request_bytes"] > 0
    assert line["duration_ms"] > 0 and line["level"] == "INFO" and line["time"].endswith("Z")


def test_djangos_own_lines_carry_the_request_id_too(json_lines, rpc, make_key, namespace):
    viewer = make_key("team-a", Role.VIEWER)
    result = rpc("containers.api.v1.NamespaceService/GetNamespace", {"namespace": "team-a"}, token=viewer)
    assert result.status == 403
    (warning,) = [line for line in json_lines() if line["logger"] == "django.request"]
    assert warning["request_id"] == result.response["X-Request-Id"]
    assert warning["request"] == "/containers.api.v1.NamespaceService/GetNamespace"


def test_an_error_is_logged_once_with_its_traceback_and_no_credential(json_lines, rpc, admin_key, settings):
    settings.RPC_SERVICES = [*settings.RPC_SERVICES, TESTING_SERVICE]
    result = rpc(PATH + "Crash", {}, token=admin_key, headers={"Cookie": COOKIE})
    assert result.status == 500
    lines = json_lines()
    errors = [line for line in lines if line["level"] == "ERROR"]
    assert len(errors) == 1, errors
    assert "Traceback" in errors[0]["exc_info"] and "RuntimeError" in errors[0]["exc_info"]
    assert errors[0]["request_id"] == result.response["X-Request-Id"]
    (request_line,) = [line for line in lines if line["logger"] == "controlplane.request"]
    assert request_line["code"] == "internal"
    text = "\n".join(json.dumps(line) for line in lines)
    for secret in (admin_key, COOKIE.split("=", 1)[1], "Bearer", "Authorization", "authorization"):
        assert secret not in text


def test_the_request_id_of_a_trusted_proxy_is_kept_others_are_replaced(settings):
    settings.TRUSTED_PROXIES = ["10.0.0.1"]
    assert request_id({"HTTP_X_REQUEST_ID": "nginx-5f2b", "REMOTE_ADDR": "10.0.0.1"}) == "nginx-5f2b"
    assert request_id({"HTTP_X_REQUEST_ID": "nginx-5f2b", "REMOTE_ADDR": "10.9.9.9"}) != "nginx-5f2b"
    # A header that could forge log lines is not taken even from the proxy.
    assert request_id({"HTTP_X_REQUEST_ID": 'x" injected', "REMOTE_ADDR": "10.0.0.1"}) != 'x" injected'
    assert len(request_id({"REMOTE_ADDR": "10.0.0.1"})) == 32


@pytest.fixture
def only_json_console(settings):
    """The request logger as LOG_FORMAT=json sets it up: one StreamHandler, the JSON formatter."""
    settings.LOG_REQUESTS = True
    stream, handler = json_console()
    request_logger = logging.getLogger("controlplane.request")
    saved = request_logger.handlers, request_logger.propagate, request_logger.level
    request_logger.handlers, request_logger.propagate = [handler], False
    request_logger.setLevel(logging.INFO)
    # pytest adds its capturing handlers when the test starts: the test calls this first.
    yield stream, lambda: setattr(request_logger, "handlers", [handler])
    request_logger.handlers, request_logger.propagate = saved[:2]
    request_logger.setLevel(saved[2])


def test_the_direct_request_line_is_the_line_the_record_would_make(only_json_console, rpc, admin_key):
    stream, only = only_json_console
    only()
    request_logger = logging.getLogger("controlplane.request")
    handler = request_logger.handlers[0]
    assert logs._only_json_stream_handler(request_logger) is handler
    for _ in range(2):  # the first call also notes the key's use: one more statement
        stream.seek(0), stream.truncate()
        rpc("containers.api.v1.NamespaceService/GetNamespace", {"namespace": "team-a"}, token=admin_key)
    direct = json.loads(stream.getvalue())
    # The same call through a record: a filter on the logger turns the direct path off.
    request_logger.addFilter(lambda record: True)
    rpc("containers.api.v1.NamespaceService/GetNamespace", {"namespace": "team-a"}, token=admin_key)
    request_logger.filters.clear()
    via_record = json.loads(stream.getvalue().splitlines()[1])
    assert direct.keys() == via_record.keys()
    varying = {"time", "request_id", "duration_ms", "message"}
    assert {k: v for k, v in direct.items() if k not in varying} == {
        k: v for k, v in via_record.items() if k not in varying
    }
    assert direct["message"].startswith("POST /containers.api.v1.NamespaceService/GetNamespace 200 ok ")


def test_the_direct_path_is_only_for_one_plain_json_stream_handler(only_json_console):
    only_json_console[1]()
    request_logger = logging.getLogger("controlplane.request")
    handler = request_logger.handlers[0]

    class Rotating(logging.StreamHandler):
        pass

    for changed in (
        lambda: request_logger.addHandler(logging.StreamHandler(io.StringIO())),  # a second handler
        lambda: setattr(handler, "formatter", logging.Formatter()),  # plain text
        lambda: handler.addFilter(lambda record: True),  # a filter that may drop or change it
        lambda: setattr(handler, "level", logging.WARNING),
        lambda: setattr(request_logger, "handlers", [Rotating(io.StringIO())]),
    ):
        saved = list(request_logger.handlers), handler.formatter, list(handler.filters), handler.level
        changed()
        assert logs._only_json_stream_handler(request_logger) is None
        request_logger.handlers, handler.formatter, handler.filters, handler.level = saved
    assert logs._only_json_stream_handler(request_logger) is handler


def test_statements_are_counted_beside_a_callers_own_execute_wrapper(json_lines, rpc, admin_key):
    # The counter stays installed first: a wrapper pushed and popped around it keeps its place.
    seen = []

    def mine(execute, sql, params, many, context):
        seen.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(mine):
        rpc("containers.api.v1.NamespaceService/GetNamespace", {"namespace": "team-a"}, token=admin_key)
    assert connection.execute_wrappers.count(mine) == 0
    (line,) = [line for line in json_lines() if line["logger"] == "controlplane.request"]
    assert line["statements"] == len(seen) >= 1


@pytest.mark.parametrize(
    "created", [0.0, 1764000000.0, 1764000000.0005, 1764000000.1229999, 1764000000.9995, 1764000000.9999996, 4e9 + 0.5]
)
def test_log_times_are_what_datetime_writes(created):
    expected = datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    assert logs.rfc3339(created) == expected
    assert logs.rfc3339(created) == expected  # the second, from the memo of the second


@pytest.mark.django_db(transaction=True)  # a finished stream closes its connection, as at a request's end
def test_a_server_stream_is_logged_once_when_it_ends_with_its_code_and_bytes(json_lines, client, admin_key):
    job = run_job(actor=Principal.system(), namespace="team-a", image="busybox")
    Job.objects.filter(pk=job.pk).update(state=Job.State.SUCCEEDED)
    response, received = stream_call(client, "containers.api.v1.JobService/FollowJobLogs", {"jobId": job.job_id},
                                     admin_key)  # fmt: skip
    (line,) = [line for line in json_lines() if line["logger"] == "controlplane.request"]
    assert line["request_id"] == response["X-Request-Id"]
    assert line["procedure"] == "containers.api.v1.JobService/FollowJobLogs"
    assert (line["code"], line["status"]) == ("ok", 200)
    assert line["response_bytes"] == len(received) > 0 and line["statements"] >= 2
    assert line["principal"].startswith("api_key:key_")
