#!/usr/bin/env python
"""Authentication benchmark: what resolving a cpk_ API key costs, alone and inside a cheap RPC.

Runs on PostgreSQL (DATABASE_URL) in a throwaway database (`cp_bench_<name>`, created and
dropped by Django's test-database machinery), so it never touches real data. Prints:

- resolving an API key (ApiKeyAuthenticator): median/p95 µs, SQL queries, and the query plan;
- GetNamespace with an ADMIN key through the whole WSGI stack (every middleware), in-process:
  requests/s, p50/p95 latency, and the share of the request's time spent in authentication
  (controlplane.auth.authenticators.authenticate, timed by a wrapper during the run);
- optionally the same RPC against a real gunicorn process over loopback.

Goals: one indexed query per resolution; authentication ≤ 10% of the cheap RPC's time.
Exit status: 0 when every goal passes, 1 when one fails, 2 when it cannot run.
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import os
import platform
import secrets
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PROCEDURE = "/containers.api.v1.NamespaceService/GetNamespace"
NAMESPACE = "bench"
AUTH_SHARE_GOAL = 0.10


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=3000, help="timed iterations per measurement")
    parser.add_argument("--filler-keys", type=int, default=20000, help="other API keys in the table")
    parser.add_argument("--gunicorn-seconds", type=float, default=3.0, help="loopback load duration; 0 skips it")
    parser.add_argument("--gunicorn-workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--clients", type=int, default=4, help="client threads of the loopback load loop")
    parser.add_argument("--allow-sqlite", action="store_true", help="run on SQLite anyway (figures not comparable)")
    return parser.parse_args(argv)


def configure_environment() -> None:
    """Production-like settings: DEBUG off (no query log), plain HTTP on loopback."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")
    os.environ.setdefault("DEBUG", "false")
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-" + secrets.token_urlsafe(32))
    os.environ.setdefault("ALLOWED_HOSTS", "127.0.0.1,localhost")
    os.environ.setdefault("SECURE_SSL_REDIRECT", "false")
    os.environ.setdefault("LOG_LEVEL", "WARNING")


def micros(ns: float) -> float:
    return ns / 1000


def percentile(samples: list[int], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


class Report:
    def __init__(self):
        self.rows: list[tuple[str, str]] = []
        self.goals: list[tuple[bool, str]] = []

    def row(self, label: str, value: str) -> None:
        self.rows.append((label, value))

    def goal(self, passed: bool, text: str) -> None:
        self.goals.append((passed, text))

    def print(self, title: str) -> None:
        width = max(len(label) for label, _ in self.rows)
        print(title)
        print("-" * len(title))
        for label, value in self.rows:
            print(f"{label:<{width}}  {value}")
        print()
        for passed, text in self.goals:
            print(f"[{'PASS' if passed else 'FAIL'}] {text}")

    @property
    def passed(self) -> bool:
        return all(passed for passed, _ in self.goals)


# --- data -------------------------------------------------------------------------------


def seed(filler_keys: int) -> str:
    """A namespace with a few children (so GetNamespace does its real work), an ADMIN key, filler keys."""
    from django.db import connection
    from django.utils import timezone

    from apikeys import tokens
    from apikeys.models import ApiKey
    from apikeys.services import issue_api_key
    from controlplane.auth import Principal, Role
    from namespaces.models import Namespace
    from namespaces.services import Binding, PullSecret, Target, create_namespace

    actor = Principal.system("bench")
    create_namespace(
        actor=actor,
        name=NAMESPACE,
        groups=[Binding("bench-admins", Role.ADMIN), Binding("bench-devs", Role.OPERATOR)],
        internal_targets=[Target("db", "db.internal", (5432,)), Target("cache", "cache.internal", (6379,))],
        image_pull_secrets=[PullSecret("ghcr.io", "vault://kv/bench/ghcr")],
        quotas={"max_sandboxes": 10, "max_running_jobs": 5},
    )
    _, plaintext = issue_api_key(actor=actor, namespace=NAMESPACE, name="bench admin", role=Role.ADMIN)
    namespace = Namespace.objects.get(name=NAMESPACE)
    now = timezone.now()
    ApiKey.objects.bulk_create(
        (
            ApiKey(
                key_id=tokens.new_key_id(),
                digest=tokens.digest(tokens.generate()),
                hint="xxxx",
                name=f"filler {i}",
                namespace=namespace,
                namespace_name=namespace.name,
                role=int(Role.VIEWER),
                created_at=now,
                created_by="system:bench",
            )
            for i in range(filler_keys)
        ),
        batch_size=2000,
    )
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    return plaintext


# --- measurements -----------------------------------------------------------------------


def measure_resolution(report: Report, token: str, iterations: int) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from apikeys.authentication import ApiKeyAuthenticator

    authenticator = ApiKeyAuthenticator()
    authenticator.authenticate(token)  # first use in the window also writes last_used
    for _ in range(200):
        authenticator.authenticate(token)
    samples = []
    for _ in range(iterations):
        started = time.perf_counter_ns()
        authenticator.authenticate(token)
        samples.append(time.perf_counter_ns() - started)
    counted = 200
    with CaptureQueriesContext(connection) as steady:
        for _ in range(counted):
            authenticator.authenticate(token)
    per_resolution = len(steady.captured_queries) / counted
    plan = explain(steady.captured_queries[0]["sql"]) if steady.captured_queries else []
    index = next((line.split(" using ")[1].split(" ")[0] for line in plan if " using " in line), None)

    report.row("API key resolution: median", f"{micros(statistics.median(samples)):.0f} µs")
    report.row("API key resolution: p95", f"{micros(percentile(samples, 0.95)):.0f} µs")
    report.row("SQL queries per resolution", f"{per_resolution:g} (+1 UPDATE of last_used on first use per minute)")
    report.row("query plan", " > ".join(plan) or "(EXPLAIN only on PostgreSQL)")
    report.goal(
        per_resolution == 1 and (index is not None or connection.vendor != "postgresql"),
        f"one indexed query per key resolution ({per_resolution:g} query, index {index})",
    )


def explain(sql: str) -> list[str]:
    """The plan's nodes, without costs and conditions."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return []
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + sql)
        lines = [row[0].split("  (cost")[0].strip(" ->") for row in cursor.fetchall()]
    return [line for line in lines if not line.startswith(("Index Cond", "Filter", "Join Filter"))]


def wsgi_caller(token: str):
    """Calls the project's WSGI application with a prepared environ, as gunicorn would."""
    from controlplane.wsgi import application

    body = json.dumps({"namespace": NAMESPACE}).encode()
    base = {
        "REQUEST_METHOD": "POST",
        "SCRIPT_NAME": "",
        "PATH_INFO": PROCEDURE,
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "127.0.0.1:8000",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
        "HTTP_AUTHORIZATION": f"Bearer {token}",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }

    def call() -> tuple[str, bytes]:
        status = []
        result = application({**base, "wsgi.input": io.BytesIO(body)}, lambda s, h, e=None: status.append(s))
        try:
            return status[0], b"".join(result)
        finally:
            result.close()

    return call


def measure_stack(report: Report, token: str, iterations: int) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    import controlplane.auth.middleware as middleware

    call = wsgi_caller(token)
    status, body = call()
    if not status.startswith("200") or json.loads(body).get("namespace") != NAMESPACE:
        raise SystemExit(f"GetNamespace failed: {status} {body[:300]!r}")
    for _ in range(200):
        call()
    with CaptureQueriesContext(connection) as queries:
        call()
    queries_per_request = len(queries)  # now: the log is cleared at the next request

    auth_times: list[int] = []
    original = middleware.authenticate

    def timed_authenticate(request):
        started = time.perf_counter_ns()
        try:
            return original(request)
        finally:
            auth_times.append(time.perf_counter_ns() - started)

    middleware.authenticate = timed_authenticate
    totals = []
    try:
        run_started = time.perf_counter_ns()
        for _ in range(iterations):
            started = time.perf_counter_ns()
            call()
            totals.append(time.perf_counter_ns() - started)
        elapsed = time.perf_counter_ns() - run_started
    finally:
        middleware.authenticate = original
    if len(auth_times) != iterations:
        raise SystemExit(f"authentication ran {len(auth_times)} times for {iterations} requests")
    share = sum(auth_times) / sum(totals)

    report.row("GetNamespace via WSGI stack: req/s", f"{iterations / (elapsed / 1e9):,.0f} (1 thread, in-process)")
    report.row(
        "  latency p50 / p95", f"{micros(percentile(totals, 0.5)):.0f} / {micros(percentile(totals, 0.95)):.0f} µs"
    )
    report.row("  authentication per request (median)", f"{micros(statistics.median(auth_times)):.0f} µs")
    report.row("  authentication share of request time", f"{share:.1%}")
    report.row("  SQL queries per request", f"{queries_per_request} (auth: 1)")
    report.goal(share <= AUTH_SHARE_GOAL, f"authentication ≤ {AUTH_SHARE_GOAL:.0%} of GetNamespace time ({share:.1%})")


def measure_gunicorn(report: Report, token: str, seconds: float, workers: int, clients: int) -> None:
    from tests.live import ServiceProcess

    service = ServiceProcess(env={"DATABASE_POOL": "true", "LOG_LEVEL": "WARNING"}, workers=workers).start()
    try:
        body = json.dumps({"namespace": NAMESPACE}).encode()
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        latencies: list[int] = []
        failures: list[str] = []
        lock = threading.Lock()
        stop_at = time.monotonic() + seconds

        def client():
            mine, errors = [], []
            while time.monotonic() < stop_at:
                started = time.perf_counter_ns()
                conn = http.client.HTTPConnection("127.0.0.1", service.port, timeout=10)
                try:
                    conn.request("POST", PROCEDURE, body=body, headers=headers)
                    response = conn.getresponse()
                    response.read()
                    if response.status != 200:
                        errors.append(str(response.status))
                finally:
                    conn.close()
                mine.append(time.perf_counter_ns() - started)
            with lock:
                latencies.extend(mine)
                failures.extend(errors)

        threads = [threading.Thread(target=client) for _ in range(clients)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - started
    finally:
        service.stop()
    if failures:
        raise SystemExit(f"gunicorn run: {len(failures)} failed requests, e.g. HTTP {failures[0]}")
    report.row(
        "GetNamespace via gunicorn (loopback): req/s",
        f"{len(latencies) / elapsed:,.0f} ({workers} workers, {clients} client threads, {seconds:g} s)",
    )
    report.row(
        "  latency p50 / p95",
        f"{micros(percentile(latencies, 0.5)):.0f} / {micros(percentile(latencies, 0.95)):.0f} µs",
    )


# --- main -------------------------------------------------------------------------------


def main(argv=None) -> int:
    args = parse_args(argv)
    configure_environment()
    import django

    django.setup()
    from django.db import connection

    if connection.vendor != "postgresql":
        message = f"the benchmark is meant for PostgreSQL (DATABASE_URL); this is {connection.vendor}"
        if not args.allow_sqlite:
            print(f"error: {message}. Set DATABASE_URL=postgres://... (or pass --allow-sqlite).", file=sys.stderr)
            return 2
        print(f"WARNING: {message}; figures are not comparable.", file=sys.stderr)

    source_name = connection.settings_dict["NAME"]
    test_settings = connection.settings_dict.setdefault("TEST", {})
    if connection.vendor == "postgresql":
        test_settings["NAME"] = f"cp_bench_{Path(str(source_name)).name}"
    else:
        test_settings["NAME"] = str(Path(str(source_name)).with_name("cp_bench.sqlite3"))
    bench_db = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        token = seed(args.filler_keys)
        with connection.cursor() as cursor:
            cursor.execute("SELECT version()" if connection.vendor == "postgresql" else "SELECT sqlite_version()")
            server = cursor.fetchone()[0].split(" on ")[0]
        report = Report()
        measure_resolution(report, token, args.iterations)
        measure_stack(report, token, args.iterations)
        if args.gunicorn_seconds > 0:
            measure_gunicorn(report, token, args.gunicorn_seconds, args.gunicorn_workers, args.clients)
    finally:
        connection.creation.destroy_test_db(source_name, verbosity=0)
    report.print(
        f"Authentication benchmark — {server}, throwaway database {Path(str(bench_db)).name}, "
        f"{args.filler_keys + 1} API keys, Python {platform.python_version()}, {os.cpu_count()} CPUs"
    )
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
