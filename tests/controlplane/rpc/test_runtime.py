"""The connectrpc runtime behind gunicorn, as clients no one here wrote see it.

- Connect GET (JSON and base64), not cacheable by shared caches; 405 for side effects;
- chunked request bodies (connect-node's default over HTTP/1.1), with the size limit on the
  bytes actually read, and a zero-length gzip body as the empty message;
- an error answered before a large body is read keeps a kept-alive connection usable;
- buf curl through server reflection (no --schema), over Connect and gRPC-Web, and gRPC
  proper over HTTP/2 (gunicorn's gthread worker with h2c gives WSGI apps trailers).
"""

from __future__ import annotations

import base64
import gzip
import json
import socket
import subprocess
import urllib.parse

import pytest

from containers.api.v1 import namespace_pb2 as pb
from controlplane.auth import Role
from tests.conftest import ROOT
from tests.support.live import ServiceProcess

pytestmark = pytest.mark.e2e

GET_NAMESPACE = "/containers.api.v1.NamespaceService/GetNamespace"
BUF = ROOT / "node_modules" / ".bin" / "buf"
# HTTP/1.1 and cleartext HTTP/2 (h2c) on one port; the gthread worker serves both and offers
# gRPC its trailers. Only peers in --forwarded-allow-ips may speak h2c.
H2C = ("--worker-class", "gthread", "--threads", "4", "--http-protocols", "h1,h2", "--http2-cleartext", "both",
       "--forwarded-allow-ips", "127.0.0.1")  # fmt: skip


@pytest.fixture(scope="module")
def h2c_service(django_db_setup, django_db_blocker):
    service = ServiceProcess(args=H2C).start()
    yield service
    service.stop()


@pytest.fixture
def admin(transactional_db, namespace, make_key):
    return make_key("team-a", Role.ADMIN)


# ---- raw HTTP/1.1 -----------------------------------------------------------------------------


class Connection:
    """One kept-alive HTTP/1.1 connection, written by hand so nothing hides what goes on the wire."""

    def __init__(self, url: str):
        host, port = urllib.parse.urlsplit(url).netloc.split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        self.buffer = b""

    def send(self, method: str, path: str, headers: dict, body: bytes | list[bytes] = b"") -> None:
        lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in headers.items())]
        if isinstance(body, list):  # chunked: each item is a chunk, as a streaming client sends them
            lines.append("Transfer-Encoding: chunked")
            payload = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for chunk in body if chunk) + b"0\r\n\r\n"
        else:
            lines.append(f"Content-Length: {len(body)}")
            payload = body
        self.sock.sendall("\r\n".join(lines).encode() + b"\r\n\r\n" + payload)

    def receive(self) -> tuple[int, dict, bytes]:
        while b"\r\n\r\n" not in self.buffer:
            self._fill()
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        status_line, *header_lines = head.decode().split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in header_lines)}
        length = int(headers.get("content-length", "0"))
        while len(self.buffer) < length:
            self._fill()
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return int(status_line.split()[1]), headers, body

    def _fill(self) -> None:
        data = self.sock.recv(65536)
        assert data, "the server closed the connection"
        self.buffer += data

    def close(self) -> None:
        self.sock.close()


def call(url, method, path, headers, body=b""):
    connection = Connection(url)
    try:
        connection.send(method, path, headers, body)
        return connection.receive()
    finally:
        connection.close()


def json_body(namespace="team-a") -> bytes:
    return json.dumps({"namespace": namespace}).encode()


# ---- Connect GET ------------------------------------------------------------------------------


@pytest.mark.parametrize("base64_encoded", [False, True])
def test_connect_get(live_service, admin, base64_encoded):
    if base64_encoded:
        message = base64.urlsafe_b64encode(pb.GetNamespaceRequest(namespace="team-a").SerializeToString())
        query = {"connect": "v1", "encoding": "proto", "base64": "1", "message": message.decode().rstrip("=")}
    else:
        query = {"connect": "v1", "encoding": "json", "message": json_body().decode()}
    path = f"{GET_NAMESPACE}?{urllib.parse.urlencode(query)}"
    status, headers, body = call(live_service.url, "GET", path, {"Authorization": f"Bearer {admin}"})
    assert status == 200, body
    reply = pb.Namespace.FromString(body) if base64_encoded else pb.Namespace(namespace=json.loads(body)["namespace"])
    assert reply.namespace == "team-a"
    # An authenticated answer: never stored by a shared cache (nor by the browser).
    assert "private" in headers["cache-control"] and "no-store" in headers["cache-control"]


def test_connect_get_needs_a_credential(live_service, admin):
    query = urllib.parse.urlencode({"connect": "v1", "encoding": "json", "message": json_body().decode()})
    status, _, body = call(live_service.url, "GET", f"{GET_NAMESPACE}?{query}", {})
    assert (status, json.loads(body)["code"]) == (401, "unauthenticated")


def test_get_on_a_method_with_side_effects_is_405(live_service, admin):
    query = urllib.parse.urlencode({"connect": "v1", "encoding": "json", "message": json_body("team-get").decode()})
    path = f"/containers.api.v1.NamespaceService/CreateNamespace?{query}"
    status, headers, _ = call(live_service.url, "GET", path, {"Authorization": f"Bearer {admin}"})
    assert status == 405
    assert headers["allow"].upper() == "POST"


# ---- request bodies ---------------------------------------------------------------------------


@pytest.mark.parametrize("compressed", [False, True])
def test_chunked_request_bodies_are_read(live_service, admin, compressed):
    body = gzip.compress(json_body()) if compressed else json_body()
    headers = {"Authorization": f"Bearer {admin}", "Content-Type": "application/json"}
    if compressed:
        headers["Content-Encoding"] = "gzip"
    chunks = [body[:7], body[7:11], body[11:]]  # split mid-field, as a streaming client may
    status, _, reply = call(live_service.url, "POST", GET_NAMESPACE, headers, chunks)
    assert status == 200, reply
    assert json.loads(reply)["namespace"] == "team-a"


def test_chunked_list_request_keeps_its_page_size(live_service, admin, other_namespace):
    headers = {"Authorization": f"Bearer {admin}", "Content-Type": "application/json"}
    body = json.dumps({"pageSize": 1}).encode()
    status, _, reply = call(
        live_service.url, "POST", "/containers.api.v1.NamespaceService/ListNamespaces", headers, [body]
    )
    assert status == 200, reply
    assert len(json.loads(reply)["namespaces"]) == 1
    assert json.loads(reply)["nextPageToken"]


def test_zero_length_gzip_body_is_the_empty_message(live_service, admin):
    headers = {"Authorization": f"Bearer {admin}", "Content-Type": "application/json", "Content-Encoding": "gzip"}
    status, _, reply = call(live_service.url, "POST", "/containers.api.v1.NamespaceService/ListNamespaces", headers)
    assert status == 200, reply
    assert [n["namespace"] for n in json.loads(reply)["namespaces"]] == ["team-a"]


def test_chunked_body_over_the_limit_is_resource_exhausted(live_service, admin):
    # No Content-Length to refuse early: the limit applies to the bytes actually read.
    limit = 4 * 1024 * 1024
    padding = b'{"namespace":"team-a","pad":"' + b"x" * limit + b'"}'
    headers = {"Authorization": f"Bearer {admin}", "Content-Type": "application/json"}
    chunks = [padding[i : i + 65536] for i in range(0, len(padding), 65536)]
    status, _, reply = call(live_service.url, "POST", GET_NAMESPACE, headers, chunks)
    assert (status, json.loads(reply)["code"]) == (429, "resource_exhausted")


@pytest.mark.parametrize("chunked", [False, True])
def test_early_error_on_a_large_body_keeps_the_connection(h2c_service, admin, chunked):
    """401 before the 1 MiB body is read: the body is drained, and the connection carries on."""
    connection = Connection(h2c_service.url)
    try:
        large = b'{"namespace":"team-a","pad":"' + b"x" * (1024 * 1024) + b'"}'
        connection.send("POST", GET_NAMESPACE, {"Content-Type": "application/json"}, [large] if chunked else large)
        status, headers, body = connection.receive()
        assert (status, json.loads(body)["code"]) == (401, "unauthenticated")
        assert headers.get("connection", "keep-alive").lower() == "keep-alive"

        authorized = {"Content-Type": "application/json", "Authorization": f"Bearer {admin}"}
        connection.send("POST", GET_NAMESPACE, authorized, json_body())
        status, _, body = connection.receive()
        assert status == 200, body
        assert json.loads(body)["namespace"] == "team-a"
    finally:
        connection.close()


# ---- buf curl: reflection, gRPC-Web, gRPC over HTTP/2 -----------------------------------------


def buf_curl(url: str, protocol: str, token: str, *extra: str) -> subprocess.CompletedProcess:
    args = [str(BUF), "curl", "--protocol", protocol, *extra, "-H", f"Authorization: Bearer {token}"]
    args += ["-d", json.dumps({"namespace": "team-a"}), url + GET_NAMESPACE]
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("protocol", ["connect", "grpcweb"])
def test_buf_curl_through_reflection(h2c_service, admin, protocol):
    # No --schema: buf curl asks the server (grpc.reflection.v1) what the method looks like.
    result = buf_curl(h2c_service.url, protocol, admin)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["namespace"] == "team-a"


def test_buf_curl_grpc_over_http2(h2c_service, admin):
    result = buf_curl(h2c_service.url, "grpc", admin, "--http2-prior-knowledge")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["namespace"] == "team-a"


def test_grpc_errors_over_http2_keep_their_code(h2c_service, transactional_db, namespace, make_key):
    viewer = make_key("team-a", Role.VIEWER)
    result = buf_curl(h2c_service.url, "grpc", viewer, "--http2-prior-knowledge")
    assert result.returncode >> 3 == 7, result.stderr  # buf curl exits with the gRPC code << 3
    assert json.loads(result.stderr)["code"] == "permission_denied"


def test_buf_curl_grpc_web_with_the_schema(live_service, admin):
    # The default sync worker (HTTP/1.1 only): gRPC-Web works there too.
    result = buf_curl(live_service.url, "grpcweb", admin, "--schema", "proto")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["namespace"] == "team-a"


def test_grpc_over_http1_is_refused_with_what_works(live_service, admin):
    status, headers, _ = call(live_service.url, "POST", GET_NAMESPACE, {"Content-Type": "application/grpc"}, b"")
    assert status == 415
    assert "application/grpc-web+proto" in headers["accept-post"]
