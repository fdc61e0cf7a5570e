"""A malformed chunked body is the client's error (issue 22, finding 5): sent straight to gunicorn,
`zz` as a chunk size used to be a Django 500 with a traceback (no credential) or 500 `internal`
echoing "Invalid chunk size" (with one). It is 400 invalid_argument, and the connection closes."""

from __future__ import annotations

import json
import socket

import pytest

from controlplane.auth import Role
from tests.support.live import ServiceProcess

pytestmark = pytest.mark.e2e

GET_NAMESPACE = "/containers.api.v1.NamespaceService/GetNamespace"


@pytest.fixture(scope="module")
def service(django_db_setup, django_db_blocker):
    service = ServiceProcess(workers=1).start()
    yield service
    service.stop()


def send_raw(url: str, head: list[str], body: bytes) -> bytes:
    """Writes one request by hand and reads until the server closes the connection."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall("\r\n".join([*head, "", ""]).encode() + body)
        answer = b""
        while chunk := sock.recv(65536):  # a timeout here: the connection was kept open
            answer += chunk
    return answer


@pytest.mark.parametrize("credential", [False, True])
@pytest.mark.parametrize(
    "content_type, body",
    [
        ("application/json", b"zz\r\n{}\r\n0\r\n\r\n"),
        ("application/json", b'2\r\n{"\r\nzz\r\n}\r\n0\r\n\r\n'),  # a bad size after a good chunk
        ("application/grpc-web+proto", b"zz\r\n\x00\x00\x00\x00\x00\r\n0\r\n\r\n"),
    ],
)
def test_malformed_chunked_body_is_invalid_argument(service, transactional_db, namespace, make_key, credential,
                                                    content_type, body):  # fmt: skip
    log_before = len(service.log())
    head = [f"POST {GET_NAMESPACE} HTTP/1.1", "Host: 127.0.0.1", f"Content-Type: {content_type}"]
    head.append("Transfer-Encoding: chunked")
    if credential:
        head.append(f"Authorization: Bearer {make_key('team-a', Role.ADMIN)}")
    answer = send_raw(service.url, head, body)
    status_line, rest = answer.split(b"\r\n", 1)
    headers, _, payload = rest.partition(b"\r\n\r\n")
    assert status_line.startswith(b"HTTP/1.1 400"), answer[:500]
    assert b"connection: close" in headers.lower()
    error = json.loads(payload)
    assert error["code"] == "invalid_argument" and "Invalid chunk size" not in error["message"], error
    log = service.log()[log_before:]
    assert "Traceback" not in log and " ERROR " not in log, log
    assert f"WARNING django.request Bad Request: {GET_NAMESPACE}" in log  # logged as the client's error


def test_the_next_connection_is_served(service, transactional_db, namespace, make_key):
    key = make_key("team-a", Role.ADMIN)
    head = [f"POST {GET_NAMESPACE} HTTP/1.1", "Host: 127.0.0.1", "Transfer-Encoding: chunked",
            "Content-Type: application/json", f"Authorization: Bearer {key}"]  # fmt: skip
    assert send_raw(service.url, head, b"zz\r\n\r\n").startswith(b"HTTP/1.1 400")
    body = b'{"namespace": "team-a"}'
    head = [f"POST {GET_NAMESPACE} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json",
            f"Content-Length: {len(body)}", f"Authorization: Bearer {key}", "Connection: close"]  # fmt: skip
    assert send_raw(service.url, head, body).startswith(b"HTTP/1.1 200")
