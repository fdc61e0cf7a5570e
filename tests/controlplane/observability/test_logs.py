"""JSON logs: one line per request with its id (also in the X-Request-Id header), errors once
with their traceback, and never a credential."""

from __future__ import annotations

import io
import json
import logging

import pytest

from controlplane.auth import Role
from controlplane.observability import logs
from controlplane.observability.requests import request_id
from tests.support.testing_service import PATH, TESTING_SERVICE

COOKIE = "cp_session=cookie-value-that-must-not-be-logged"


@pytest.fixture
def json_lines(settings):
    """The JSON lines the root logger writes while the test runs (LOG_FORMAT=json's handler)."""
    settings.LOG_REQUESTS = True
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logs.JsonFormatter())
    handler.addFilter(logs.RequestContext())
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
