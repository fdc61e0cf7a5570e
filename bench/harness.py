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
def throwaway_database(
    prefix: str,
    allow_sqlite: bool,
    *,
    sqlite_name: str | None = None,
    sqlite_warning: str | None = "figures are not comparable.",
):
    """A fresh database `<prefix>_<name of DATABASE_URL's>` (Django's test-database machinery),
    dropped afterwards; yields its name, or None when the benchmark must not run (SQLite, not
    allowed). On SQLite it is the file `sqlite_name` (default `<prefix>.sqlite3`) next to
    DATABASE_URL's, with `sqlite_warning` printed first (None: nothing printed)."""
    from django.db import connection

    from apikeys import keycache

    if connection.vendor != "postgresql":
        message = f"the benchmark is meant for PostgreSQL (DATABASE_URL); this is {connection.vendor}"
        if not allow_sqlite:
            print(f"error: {message}. Set DATABASE_URL=postgres://... (or pass --allow-sqlite).", file=sys.stderr)
            yield None
            return
        if sqlite_warning is not None:
            print(f"WARNING: {message}; {sqlite_warning}", file=sys.stderr)
    source_name = connection.settings_dict["NAME"]
    test_settings = connection.settings_dict.setdefault("TEST", {})
    if connection.vendor == "postgresql":
        # PostgreSQL cuts names at 63 bytes: the name yielded is the one to connect to.
        test_settings["NAME"] = f"{prefix}_{Path(str(source_name)).name}"[:63]
    else:
        test_settings["NAME"] = str(Path(str(source_name)).with_name(sqlite_name or f"{prefix}.sqlite3"))
    name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        yield name
    finally:
        keycache.reset()  # its listeners' connections (controlplane.notify) would block the DROP DATABASE
        connection.creation.destroy_test_db(source_name, verbosity=0)


class StatStatements:
    """pg_stat_statements for the current database: calls, plans and planning time per statement.

    Needs the server's shared_preload_libraries to hold pg_stat_statements (and
    pg_stat_statements.track_planning = on for the planning figures); `reason` says what is
    missing, and a bench then reports that instead of failing.
    """

    def __init__(self, connection):
        self.connection = connection
        self.reason = ""
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('shared_preload_libraries')")
            if "pg_stat_statements" not in cursor.fetchone()[0]:
                self.reason = "pg_stat_statements is not in the server's shared_preload_libraries"
                return
            try:
                cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            except Exception as exc:  # e.g. a role that may not create it
                self.reason = f"CREATE EXTENSION pg_stat_statements failed: {str(exc).splitlines()[0]}"
                return
            cursor.execute("SELECT current_setting('pg_stat_statements.track_planning')")
            if cursor.fetchone()[0] != "on":
                self.reason = "pg_stat_statements.track_planning is off, so planning is not counted"

    @property
    def available(self) -> bool:
        return not self.reason

    def reset(self) -> None:
        with self.connection.cursor() as cursor:
            cursor.execute(f"SELECT pg_stat_statements_reset(0, ({self._DATABASE}), 0)")

    def find(self, *fragments: str) -> tuple[int, int, float, float] | None:
        """(calls, plans, mean planning ms, mean execution ms) of the most called statement
        whose text holds every fragment, or None."""
        with self.connection.cursor() as cursor:
            cursor.execute(
                "SELECT query, calls, plans, total_plan_time, total_exec_time FROM pg_stat_statements"
                f" WHERE dbid = ({self._DATABASE}) AND calls > 0 ORDER BY calls DESC"
            )
            for query, calls, plans, plan_ms, exec_ms in cursor.fetchall():
                if all(fragment in query for fragment in fragments):
                    return calls, plans, plan_ms / calls, exec_ms / calls
        return None

    @staticmethod
    def describe(figures: tuple[int, int, float, float]) -> str:
        calls, plans, plan_ms, exec_ms = figures
        return (
            f"{calls} calls, {plans} plans ({plans / calls:.2f} per call); mean planning "
            f"{plan_ms * 1000:.0f} µs, execution {exec_ms * 1000:.0f} µs"
        )

    _DATABASE = "SELECT oid FROM pg_database WHERE datname = current_database()"


def percentile(samples: list[float], fraction: float) -> float:
    """The sample at `fraction` of the sorted samples (0.5: the median's upper neighbour)."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]
