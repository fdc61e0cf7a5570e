"""Shared fixtures: an RPC caller over Django's test client, and key/namespace factories."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import brotli
import pytest
import zstandard
from django.db import connection

from apikeys.services import issue_api_key
from controlplane.auth import Principal, Role
from namespaces.services import create_namespace

SYSTEM = Principal.system("tests")
ROOT = Path(__file__).resolve().parent.parent


def pytest_report_header(config):
    from django.conf import settings

    return f"database: {settings.DATABASES['default']['ENGINE']}"


def pytest_sessionfinish(session, exitstatus):
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


DECOMPRESS = {"gzip": gzip.decompress, "br": brotli.decompress, "zstd": zstandard.decompress}


class RpcResult:
    def __init__(self, response):
        self.response = response
        self.status = response.status_code
        self.raw = response.content
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
        if not payload:
            # The test client leaves both out for an empty body; a real client sends them.
            extra.update(CONTENT_TYPE=content_type, CONTENT_LENGTH="0")
        path = "/" + procedure + (f"?{query}" if query else "")
        response = client.generic(method, path, payload, content_type=content_type, **extra)
        return RpcResult(response)

    return call


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
    from tests.live import ServiceProcess

    service = ServiceProcess().start()
    yield service
    service.stop()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # The real hasher costs ~1 s per test user; hashing strength is not under test here.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
