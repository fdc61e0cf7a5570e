"""What the benchmarks share: production-like settings, and calling the WSGI application
in-process with a prepared environ, as gunicorn would."""

from __future__ import annotations

import contextlib
import io
import json
import os
import secrets
import sys
from pathlib import Path


def production_like_environment(**defaults: str) -> None:
    """Settings that the figures depend on, as in production: DEBUG off (no query log), plain
    HTTP on loopback, a throwaway secret. `defaults` add to or replace these; a variable
    already set in the environment wins over both."""
    values = {
        "DJANGO_SETTINGS_MODULE": "controlplane.settings",
        "DEBUG": "false",
        "SECRET_KEY": "bench-only-secret-key-" + secrets.token_urlsafe(32),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "SECURE_SSL_REDIRECT": "false",
        "LOG_LEVEL": "WARNING",
        **defaults,
    }
    for name, value in values.items():
        os.environ.setdefault(name, value)


def wsgi_caller(method: str, path: str, headers: dict[str, str], body: bytes = b""):
    """A function that makes the request and returns (status line, body)."""
    from controlplane.wsgi import application

    base = {
        "REQUEST_METHOD": method,
        "SCRIPT_NAME": "",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "127.0.0.1:8000",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        **headers,
    }

    def call() -> tuple[str, bytes]:
        status = []
        result = application({**base, "wsgi.input": io.BytesIO(body)}, lambda s, h, e=None: status.append(s))
        try:
            return status[0], b"".join(result)
        finally:
            result.close()

    return call


def connect_caller(procedure: str, token: str, message: dict):
    """A Connect JSON call of `procedure` with a bearer token (see wsgi_caller)."""
    body = json.dumps(message).encode()
    headers = {"CONTENT_TYPE": "application/json", "HTTP_AUTHORIZATION": f"Bearer {token}"}
    return wsgi_caller("POST", procedure, headers, body)


@contextlib.contextmanager
def throwaway_database(prefix: str, allow_sqlite: bool):
    """A fresh database `<prefix>_<name of DATABASE_URL's>` (Django's test-database machinery),
    dropped afterwards; yields False when the benchmark must not run (SQLite, not allowed)."""
    from django.db import connection

    from apikeys import keycache

    if connection.vendor != "postgresql":
        message = f"the benchmark is meant for PostgreSQL (DATABASE_URL); this is {connection.vendor}"
        if not allow_sqlite:
            print(f"error: {message}. Set DATABASE_URL=postgres://... (or pass --allow-sqlite).", file=sys.stderr)
            yield False
            return
        print(f"WARNING: {message}; figures are not comparable.", file=sys.stderr)
    source_name = connection.settings_dict["NAME"]
    test_settings = connection.settings_dict.setdefault("TEST", {})
    if connection.vendor == "postgresql":
        test_settings["NAME"] = f"{prefix}_{Path(str(source_name)).name}"
    else:
        test_settings["NAME"] = str(Path(str(source_name)).with_name(f"{prefix}.sqlite3"))
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        yield True
    finally:
        keycache.reset()  # its listener's connection would block the DROP DATABASE
        connection.creation.destroy_test_db(source_name, verbosity=0)
