"""What the benchmarks share: production-like settings, and calling the WSGI application
in-process with a prepared environ, as gunicorn would."""

from __future__ import annotations

import io
import json
import os
import secrets
import sys


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
