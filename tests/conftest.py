"""Shared fixtures: an RPC caller over Django's test client, and key/namespace factories."""

from __future__ import annotations

import gzip
import json
import subprocess
import time
import weakref
from pathlib import Path

import brotli
import pytest
import zstandard
from django.db import connection
from django.db.backends.signals import connection_created
from google.protobuf import json_format, message_factory

from apikeys import keycache
from apikeys.services import issue_api_key
from controlplane.auth import Principal, Role
from controlplane.auth.authenticators import SessionAuthenticator
from controlplane.auth.oidc import Identity
from namespaces.services import create_namespace
from tests.support.connect import GRPC_CODES, HTTP_STATUS, PROTOCOLS

# Fixtures kept in tests/support/ and wanted by tests in several folders.
pytest_plugins = ["tests.support.capabilities"]

SYSTEM = Principal.system("tests")
_STATUS_BEFORE = pytest.StashKey[str | None]()
_STATUS_CHANGED = pytest.StashKey[list[str]]()
ROOT = Path(__file__).resolve().parent.parent


_PATIENT = weakref.WeakSet()  # psycopg connections of this process that wait longer


def _lose_no_deadlock_to_a_live_server(sender, connection, **kwargs):
    """The suite's own sessions wait 10 s before PostgreSQL looks for a deadlock; the live
    servers' keep its 1 s. A live server can still query after a test (a killed runner's long
    poll rechecks for work, locking a job), and its lock waits could deadlock with the TRUNCATE
    of a transactional test's flush: the server's transaction, which detects it first, is then
    the one aborted, not the flush (seen once in CI). Needs a superuser, as CI's; otherwise
    nothing changes."""
    raw = connection.connection
    if connection.vendor != "postgresql" or raw in _PATIENT:
        return
    _PATIENT.add(raw)
    try:
        raw.execute("SET deadlock_timeout = '10s'")
    except Exception:  # not a superuser: PostgreSQL's default stays
        if not raw.autocommit:
            raw.rollback()


connection_created.connect(_lose_no_deadlock_to_a_live_server)


def pytest_report_header(config):
    from django.conf import settings

    return f"database: {settings.DATABASES['default']['ENGINE']}"


def _git_status() -> str | None:
    try:
        done = subprocess.run(
            ["git", "status", "--short", "--untracked-files=all"], cwd=ROOT, capture_output=True, text=True, timeout=60
        )
    except OSError:  # no git: not a clone
        return None
    return done.stdout if done.returncode == 0 else None


def pytest_sessionstart(session):
    session.config.stash[_STATUS_BEFORE] = _git_status()


def pytest_sessionfinish(session, exitstatus):
    # The suite leaves the work tree as it found it (issue 23): no stray logs, builds or
    # rewritten lock files. A whole run that changed `git status --short` fails.
    before = session.config.stash.get(_STATUS_BEFORE, None)
    if before is not None and not hasattr(session.config, "workerinput"):
        after = _git_status()
        if after is not None and after != before:
            new = sorted(set(after.splitlines()) - set(before.splitlines()))
            session.config.stash[_STATUS_CHANGED] = new or after.splitlines()
            session.exitstatus = exitstatus = pytest.ExitCode.TESTS_FAILED
    # .ci/run reads this to prove the suite really ran on PostgreSQL.
    from django.conf import settings

    marker = ROOT / "var" / "last-test-run.json"
    marker.parent.mkdir(exist_ok=True)
    marker.write_text(
        json.dumps(
            {
                "engine": settings.DATABASES["default"]["ENGINE"],
                "collected": session.testscollected,
                "failed": session.testsfailed,
                "exitstatus": int(exitstatus),
            }
        )
    )


def pytest_terminal_summary(terminalreporter):
    changed = terminalreporter.config.stash.get(_STATUS_CHANGED, None)
    if changed:
        terminalreporter.section("the tests changed the work tree (git status --short)", red=True)
        for line in changed:
            terminalreporter.line(line)


DECOMPRESS = {"gzip": gzip.decompress, "br": brotli.decompress, "zstd": zstandard.decompress}


class RpcResult:
    protocol = "connect"

    def __init__(self, response):
        self.response = response
        self.status = response.status_code
        # A stream's refusal (415, ...) is streamed too: its bytes up to the first frame at most.
        self.raw = first_frame(response) if response.streaming else response.content
        encoding = response.get("Content-Encoding", "identity")
        if self.raw and encoding != "identity":
            self.raw = DECOMPRESS[encoding](self.raw)
        is_json = "json" in response.get("Content-Type", "")
        self.body = json.loads(self.raw) if self.raw and is_json else None

    @property
    def code(self) -> str | None:
        return self.body.get("code") if self.status != 200 and self.body else None

    def __repr__(self):
        return f"<RpcResult {self.status} {self.body if self.body is not None else self.raw[:200]!r}>"


class StreamResult:
    """The first frame of a server stream (Connect streaming JSON): a message, or its end.

    The response is closed after it, as a client that goes away would: a watch never ends."""

    protocol = "connect"

    def __init__(self, response, binary: bool = False):
        self.status = response.status_code
        buffer = first_frame(response)
        payload = buffer[5 : 5 + int.from_bytes(buffer[1:5], "big")]
        end = bool(buffer) and bool(buffer[0] & 0x02)
        # The end of the stream is JSON whatever the codec, and carries its error as a unary
        # error body would; a binary message frame stays bytes.
        frame = json.loads(payload or b"{}") if end or not binary else {"binary": payload}
        error = frame.get("error") if end else None
        self.body = error if error is not None else frame
        self.code = error["code"] if error is not None else None

    def __repr__(self):
        return f"<StreamResult {self.status} {self.code or 'ok'} {self.body}>"


def first_frame(response) -> bytes:
    """A streamed response's bytes up to its first whole frame (5-byte header, then the
    frame); the response is closed then, as by a client going away (a watch never ends)."""
    buffer = b""
    try:
        for chunk in response.streaming_content:
            buffer += chunk
            if len(buffer) >= 5 and len(buffer) >= 5 + int.from_bytes(buffer[1:5], "big"):
                break
    finally:
        response.close()
    return buffer


# A unary content type → its Connect streaming twin, for calls to server-streaming procedures.
STREAMING_CODECS = {"application/json": "application/connect+json", "application/proto": "application/connect+proto"}


def _server_streaming(procedure: str) -> bool:
    from controlplane.rpc.registry import registry

    method = registry.methods.get(procedure.lstrip("/"))
    return method is not None and method.server_streaming


@pytest.fixture
def rpc(client):
    """rpc("containers.api.v1.NamespaceService/GetNamespace", {...}, token=...) → RpcResult.

    `data` sends raw bytes instead of the JSON of `body`; `content_type` and `method` default
    to a Connect JSON POST; `headers` are HTTP header names (e.g. {"Connect-Timeout-Ms": "5"});
    `query` is the query string (Connect GET).
    """

    def call(
        procedure: str,
        body: dict | None = None,
        *,
        token: str | None = None,
        headers: dict | None = None,
        data: bytes | None = None,
        content_type: str = "application/json",
        method: str = "POST",
        query: str = "",
    ):
        extra = {}
        if token is not None:
            extra["HTTP_AUTHORIZATION"] = f"Bearer {token}"
        for name, value in (headers or {}).items():
            extra["HTTP_" + name.upper().replace("-", "_")] = value
        payload = data if data is not None else json.dumps(body or {}).encode()
        streaming_codec = STREAMING_CODECS.get(content_type)
        if streaming_codec and _server_streaming(procedure):
            # Server streams take one enveloped message (Connect streaming) and answer a stream.
            envelope = b"\x00" + len(payload).to_bytes(4, "big") + payload
            path = "/" + procedure
            response = client.generic(method, path, envelope, content_type=streaming_codec, **extra)
            return StreamResult(response, binary=streaming_codec.endswith("proto"))
        if not payload and method != "GET":
            # The test client leaves both out for an empty body; a real client sends them.
            extra.update(CONTENT_TYPE=content_type, CONTENT_LENGTH="0")
        path = "/" + procedure + (f"?{query}" if query else "")
        response = client.generic(method, path, payload, content_type=content_type, **extra)
        return RpcResult(response)

    return call


def grpc_web_frames(data: bytes) -> tuple[list[bytes], dict]:
    """A gRPC-Web body → (message frames, trailers from the trailer frame)."""
    frames, trailers = [], {}
    while len(data) >= 5:
        flags, length = data[0], int.from_bytes(data[1:5], "big")
        frame, data = data[5 : 5 + length], data[5 + length :]
        if flags & 0x80:
            for line in frame.decode().split("\r\n"):
                if line:
                    name, _, value = line.partition(":")
                    trailers[name.strip().lower()] = value.strip()
        else:
            frames.append(frame)
    return frames, trailers


class GrpcWebResult:
    """A gRPC-Web answer: length-prefixed frames, the status in the trailer frame (or, for an
    error before any message, in the headers). `status` is the HTTP status a Connect call with
    the same outcome would have, so tests can compare both protocols."""

    protocol = "grpc-web"

    def __init__(self, response, response_type):
        self.response = response
        self.http_status = response.status_code
        frames, trailers = grpc_web_frames(first_frame(response) if response.streaming else response.content)
        self.messages = [response_type.FromString(frame) for frame in frames]
        trailers = {**{k.lower(): v for k, v in response.items()}, **trailers}
        self.trailers = trailers
        grpc_status = int(trailers["grpc-status"]) if "grpc-status" in trailers else None
        self.code = None if grpc_status in (None, 0) else GRPC_CODES[grpc_status]
        self.message = trailers.get("grpc-message", "")
        self.status = HTTP_STATUS[self.code] if self.code else self.http_status
        self.body = json_format.MessageToDict(self.messages[0]) if self.messages else None

    def __repr__(self):
        return f"<GrpcWebResult HTTP {self.http_status} {self.code or 'ok'} {self.message!r} {self.body}>"


@pytest.fixture
def grpc_web(client):
    """grpc_web("containers.api.v1.NamespaceService/GetNamespace", {...}, token=...) → GrpcWebResult."""
    from controlplane.rpc.registry import registry

    def call(procedure: str, body: dict | None = None, *, token: str | None = None, headers: dict | None = None):
        method = registry.methods[procedure]
        request = json_format.ParseDict(body or {}, message_factory.GetMessageClass(method.input_type)())
        payload = request.SerializeToString()
        extra = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token is not None else {}
        for name, value in (headers or {}).items():
            extra["HTTP_" + name.upper().replace("-", "_")] = value
        frame = b"\x00" + len(payload).to_bytes(4, "big") + payload
        response = client.post("/" + procedure, frame, content_type="application/grpc-web+proto", **extra)
        return GrpcWebResult(response, message_factory.GetMessageClass(method.output_type))

    return call


@pytest.fixture(params=PROTOCOLS)
def any_protocol(request, rpc, grpc_web):
    """The same call over Connect (JSON) or gRPC-Web (binary): caller(procedure, body, token=, headers=)."""
    return rpc if request.param == "connect" else grpc_web


@pytest.fixture
def namespace(db):
    return create_namespace(actor=SYSTEM, name="team-a")


@pytest.fixture
def other_namespace(db):
    return create_namespace(actor=SYSTEM, name="team-b")


@pytest.fixture
def make_key(db):
    def make(namespace: str = "team-a", role: Role = Role.VIEWER, **kwargs) -> str:
        _, plaintext = issue_api_key(
            actor=SYSTEM, namespace=namespace, name=f"{role.name.lower()} key", role=role, **kwargs
        )
        return plaintext

    return make


@pytest.fixture
def admin_key(namespace, make_key):
    return make_key("team-a", Role.ADMIN)


@pytest.fixture
def db_vendor(db):
    return connection.vendor


@pytest.fixture(scope="session")
def live_service(django_db_setup, django_db_blocker):
    """One gunicorn process for the session, on the test database.

    Use with `transactional_db` so that what a test writes is visible to the server.
    Tests needing other settings start their own `ServiceProcess(env=...)`.
    """
    from tests.support.live import ServiceProcess

    service = ServiceProcess().start()
    yield service
    service.stop()


@pytest.fixture(autouse=True)
def _no_key_cache(settings):
    # In-process tests count each call's queries and expect their writes seen at once, so the
    # API key cache is off here; tests/apikeys/test_keycache*.py turn it on, and every gunicorn a
    # test starts runs with it. A listener a test started is stopped afterwards: no test
    # inherits its entries, and no connection outlives the test database (its DROP would fail).
    settings.API_KEY_CACHE_SECONDS = 0
    yield
    keycache.reset()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # The real hasher costs ~1 s per test user; hashing strength is not under test here.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def staff_client(client, django_user_model):
    # Staff, even with every model permission, is not an admin principal.
    user = django_user_model.objects.create_user("bob", password="pw-bob-123456", is_staff=True)
    client.force_login(user)
    return client


@pytest.fixture
def oidc_admin_client(client, django_user_model, settings):
    # An admin principal whose Django user is neither staff nor superuser, as OIDC admins are:
    # a session stored at sign-in for a member of the platform-admin group.
    settings.OIDC_ADMIN_GROUP = "platform-admins"
    user = django_user_model.objects.create_user("oidc:carol")
    client.force_login(user)
    session = client.session
    identity = Identity(subject="carol", name="Carol", groups=frozenset({"platform-admins"}), scopes=frozenset())
    SessionAuthenticator.store(session, identity, expires_at=time.time() + 3600)
    session.save()
    return client
