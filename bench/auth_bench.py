#!/usr/bin/env python
"""Authentication and cheap-RPC benchmark: what resolving a cpk_ API key costs, alone and
inside GetNamespace, against a bare Django view doing the same database work.

Runs on PostgreSQL (DATABASE_URL) in a throwaway database (`cp_bench_<name>`, created and
dropped by Django's test-database machinery), so it never touches real data. Prints:

- resolving an API key (ApiKeyAuthenticator): median/p95 µs, SQL queries, and the query plan,
  from the per-process key cache (apikeys.keycache, default settings) and without it
  (API_KEY_CACHE_SECONDS=0);
- GetNamespace with an ADMIN key through the whole WSGI stack (every middleware), in-process,
  with the key cache and without it,
  side by side with a bare Django view (a plain function view added to a bench-only URLconf,
  under the same middleware and WSGI handler, the same environ but for its path) doing the same
  key lookup (apikeys.authentication.find_key) plus the same one namespace query: p50/p95 of
  both, their ratio, SQL statements and database round trips per request (BEGIN/COMMIT
  included: libpq's protocol trace, tests/support/roundtrips.py), and the share of GetNamespace's time
  spent in authentication (controlplane.auth.authenticators.authenticate, timed by a wrapper),
  with and without the cache, the three calls interleaved;
- round trips of a by-id read (GetJob);
- optionally GetNamespace against a real gunicorn process over loopback.

Goals: one indexed query per uncached key resolution; GetNamespace and
GetJob in at most 2 round trips (the key lookup and one query), no transaction, even without
the cache; GetNamespace p50 ≤ 1.5× the bare view's (both looking the key up); authentication
≤ 5% of GetNamespace's time (default settings: with the cache).
Exit status: 0 when every goal passes, 1 when one fails, 2 when it cannot run.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import connect_caller, percentile, production_like_environment, throwaway_database  # noqa: E402

PROCEDURE = "/containers.api.v1.NamespaceService/GetNamespace"
GET_JOB = "/containers.api.v1.JobService/GetJob"
# RPC-shaped, so the middleware treats it as it treats the RPC (controlplane.auth.middleware).
BARE_PATH = "/bench.BareDjangoView/GetNamespace"
NAMESPACE = "bench"
AUTH_SHARE_GOAL = 0.05
BARE_RATIO_GOAL = 1.5
ROUND_TRIPS_GOAL = 2


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=3000, help="timed iterations per measurement")
    parser.add_argument("--filler-keys", type=int, default=20000, help="other API keys in the table")
    parser.add_argument("--gunicorn-seconds", type=float, default=3.0, help="loopback load duration; 0 skips it")
    parser.add_argument("--gunicorn-workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--clients", type=int, default=4, help="client threads of the loopback load loop")
    parser.add_argument("--allow-sqlite", action="store_true", help="run on SQLite anyway (figures not comparable)")
    return parser.parse_args(argv)


def micros(ns: float) -> float:
    return ns / 1000


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


def seed(filler_keys: int) -> tuple[str, str]:
    """A namespace with a few children (so GetNamespace does its real work), an ADMIN key, filler
    keys, and one job (for GetJob). Returns the key and the job's id."""
    from django.db import connection
    from django.utils import timezone

    from apikeys import tokens
    from apikeys.models import ApiKey
    from apikeys.services import issue_api_key
    from controlplane.auth import Principal, Role
    from namespaces.models import Namespace
    from namespaces.services import Binding, PullSecret, Target, create_namespace
    from workloads.services.jobs import run_job

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
    job = run_job(actor=actor, namespace=NAMESPACE, image="alpine:3")
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    return plaintext, job.job_id


# --- measurements -----------------------------------------------------------------------


def cache_setting(seconds: int):
    """Runs `call` with API_KEY_CACHE_SECONDS set to `seconds` (0: no cache), then restores it."""
    from django.conf import settings

    def wrap(call):
        def run():
            default = settings.API_KEY_CACHE_SECONDS
            settings.API_KEY_CACHE_SECONDS = seconds
            try:
                return call()
            finally:
                settings.API_KEY_CACHE_SECONDS = default

        return run

    return wrap


def warm_cache(call, timeout: float = 10.0) -> None:
    """Until a call makes no query: the listener is up and the key is cached (or raises)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with CaptureQueriesContext(connection) as queries:
            call()
        if not queries.captured_queries:
            return
        time.sleep(0.01)
    raise SystemExit(f"the API key cache did not start serving within {timeout:g} s")


def measure_resolution(report: Report, token: str, iterations: int) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from apikeys.authentication import ApiKeyAuthenticator

    authenticator = ApiKeyAuthenticator()
    cached = lambda: authenticator.authenticate(token)  # noqa: E731
    uncached = cache_setting(0)(cached)
    uncached()  # first use in the window also writes last_used
    if connection.vendor == "postgresql":
        warm_cache(cached)
    for _ in range(200):
        cached(), uncached()
    samples = {cached: [], uncached: []}
    for _ in range(iterations):
        for call, mine in samples.items():
            started = time.perf_counter_ns()
            call()
            mine.append(time.perf_counter_ns() - started)
    counted = 200
    captured = {}
    for call in (cached, uncached):
        with CaptureQueriesContext(connection) as steady:
            for _ in range(counted):
                call()
        captured[call] = steady.captured_queries
    per_resolution = {call: len(queries) / counted for call, queries in captured.items()}
    plan = explain(captured[uncached][0]["sql"]) if captured[uncached] else []
    index = next((line.split(" using ")[1].split(" ")[0] for line in plan if " using " in line), None)

    for label, call in (("cached", cached), ("uncached", uncached)):
        report.row(
            f"API key resolution, {label}: median / p95",
            f"{micros(statistics.median(samples[call])):.0f} / {micros(percentile(samples[call], 0.95)):.0f} µs",
        )
    report.row(
        "SQL queries per resolution",
        f"{per_resolution[uncached]:g} uncached (+1 UPDATE of last_used on first use per minute); "
        f"{per_resolution[cached]:g} cached",
    )
    report.row("query plan", " > ".join(plan) or "(EXPLAIN only on PostgreSQL)")
    report.goal(
        per_resolution[uncached] == 1 and (index is not None or connection.vendor != "postgresql"),
        f"one indexed query per uncached key resolution ({per_resolution[uncached]:g} query, index {index})",
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


def rpc_caller(token: str, path: str = PROCEDURE, message: dict | None = None):
    return connect_caller(path, token, {"namespace": NAMESPACE} if message is None else message)


def bare_get_namespace(request):
    """The baseline: the same key lookup and the same one namespace query, answered with
    json.dumps, and nothing else (no principal, no RPC runtime, no protobuf)."""
    from django.http import HttpResponse

    from apikeys import tokens
    from apikeys.authentication import find_key
    from controlplane.auth import Role
    from namespaces.selectors import get_namespace

    token = request.headers["Authorization"].partition(" ")[2]
    key = find_key(tokens.digest(token))
    if key is None or key.role != Role.ADMIN:
        return HttpResponse(status=403)
    record = get_namespace(json.loads(request.body)["namespace"])
    answer = {
        "namespace": record.name,
        "groups": [{"oidcGroup": group, "role": role} for group, role in record.groups],
        "internalTargets": [{"name": n, "host": h, "ports": p} for n, h, p in record.internal_targets],
        "imagePullSecrets": [{"registry": r, "secretRef": ref} for r, ref in record.image_pull_secrets],
        "quotas": record.quotas,
        "createTime": record.created_at.isoformat(),
        "updateTime": record.updated_at.isoformat(),
    }
    return HttpResponse(json.dumps(answer), content_type="application/json")


def install_bare_view() -> None:
    """A bench-only URLconf: the bare view first, then the product's routes unchanged."""
    import types
    from importlib import import_module

    from django.conf import settings
    from django.urls import clear_url_caches, path
    from django.views.decorators.csrf import csrf_exempt

    module = types.ModuleType("auth_bench_urls")
    product = import_module(settings.ROOT_URLCONF)
    module.urlpatterns = [path(BARE_PATH[1:], csrf_exempt(bare_get_namespace)), *product.urlpatterns]
    sys.modules[module.__name__] = module
    settings.ROOT_URLCONF = module.__name__
    clear_url_caches()


def checked(call, what: str):
    status, body = call()
    if not status.startswith("200"):
        raise SystemExit(f"{what} failed: {status} {body[:300]!r}")
    return json.loads(body)


def database_work(call, requests: int = 20) -> tuple[float, float, float]:
    """Per request: SQL statements (CaptureQueriesContext), round trips and transactions.

    Round trips: on PostgreSQL libpq's trace, BEGIN/COMMIT included (CaptureQueriesContext never
    shows those); SQLite has none, so there they are the statements.
    """
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.support.roundtrips import RoundTrips

    statements = 0
    for _ in range(requests):
        with CaptureQueriesContext(connection) as queries:
            call()
        statements += len(queries)  # read now: the log is cleared at the next request
    with RoundTrips() as traced:
        for _ in range(requests):
            call()
    trips = traced.round_trips if connection.vendor == "postgresql" else len(traced.statements)
    return statements / requests, trips / requests, traced.transactions / requests


def timed_side_by_side(calls: list, iterations: int) -> list[list[int]]:
    """Latency samples of each call, interleaved so that the machine's drift hits all alike."""
    samples: list[list[int]] = [[] for _ in calls]
    for _ in range(iterations):
        for call, mine in zip(calls, samples, strict=True):
            started = time.perf_counter_ns()
            call()
            mine.append(time.perf_counter_ns() - started)
    return samples


def measure_stack(report: Report, token: str, job_id: str, iterations: int) -> None:
    from django.conf import settings
    from django.db import connection

    import apikeys.authentication as authentication
    import controlplane.auth.middleware as middleware

    install_bare_view()
    without_cache = cache_setting(0)
    rpc, bare = rpc_caller(token), rpc_caller(token, BARE_PATH)
    rpc_uncached = without_cache(rpc)
    get_job = rpc_caller(token, GET_JOB, {"jobId": job_id})
    if (
        checked(rpc, "GetNamespace").get("namespace") != NAMESPACE
        or checked(bare, "bare view")["namespace"] != NAMESPACE
    ):
        raise SystemExit("GetNamespace or the bare view answered another namespace")
    checked(get_job, "GetJob")
    if connection.vendor == "postgresql":
        warm_cache(lambda: authentication.ApiKeyAuthenticator().authenticate(token))
    for _ in range(200):
        rpc(), rpc_uncached(), bare()
    rpc_work, uncached_work, bare_work = database_work(rpc), database_work(rpc_uncached), database_work(bare)
    job_work, job_uncached_work = database_work(get_job), database_work(without_cache(get_job))

    # Per configuration: authentication's time, and its key query's (find_key) when it ran.
    auth_times: dict[bool, list[int]] = {True: [], False: []}
    query_times: dict[bool, list[int]] = {True: [], False: []}
    original, original_find_key = middleware.authenticate, authentication.find_key

    authenticating = []

    def timed_authenticate(request):
        started = time.perf_counter_ns()
        authenticating.append(True)
        try:
            return original(request)
        finally:
            authenticating.clear()
            auth_times[settings.API_KEY_CACHE_SECONDS > 0].append(time.perf_counter_ns() - started)

    def timed_find_key(digest):
        started = time.perf_counter_ns()
        try:
            return original_find_key(digest)
        finally:
            if authenticating:  # not the bare view's
                query_times[settings.API_KEY_CACHE_SECONDS > 0].append(time.perf_counter_ns() - started)

    middleware.authenticate = timed_authenticate
    try:
        run_started = time.perf_counter_ns()
        authentication.find_key = timed_find_key
        totals, uncached_totals, bare_totals = timed_side_by_side([rpc, rpc_uncached, bare], iterations)
        elapsed = time.perf_counter_ns() - run_started
    finally:
        middleware.authenticate, authentication.find_key = original, original_find_key
    if len(auth_times[True]) != iterations or len(auth_times[False]) != iterations:
        raise SystemExit(f"authentication ran {len(auth_times[True])} times for {iterations} requests")
    if len(query_times[False]) != iterations:
        raise SystemExit(f"the key query ran {len(query_times[False])} times for {iterations} uncached requests")
    share, uncached_share = sum(auth_times[True]) / sum(totals), sum(auth_times[False]) / sum(uncached_totals)
    p50, uncached_p50, bare_p50 = (percentile(samples, 0.5) for samples in (totals, uncached_totals, bare_totals))
    ratio, uncached_ratio = p50 / bare_p50, uncached_p50 / bare_p50

    def latency(samples):
        return f"{micros(percentile(samples, 0.5)):.0f} / {micros(percentile(samples, 0.95)):.0f} µs"

    def work(figures):
        statements, trips, transactions = figures
        return f"{statements:g} statements, {trips:g} round trips, {transactions:g} transactions"

    def authentication_time(cached: bool) -> str:
        queries = query_times[cached]
        query = f"{micros(statistics.median(queries)):.0f} µs" if queries else "-"
        return (
            f"{micros(statistics.median(auth_times[cached])):.0f} µs; the key query (find_key) ran in "
            f"{len(queries)} of {iterations} calls, median {query}"
        )

    report.row(
        "GetNamespace via WSGI stack: req/s",
        f"{iterations / (sum(totals) / 1e9):,.0f} cached, {iterations / (sum(uncached_totals) / 1e9):,.0f} "
        "uncached (1 thread, in-process)",
    )
    report.row("  latency p50 / p95, key cache (default)", latency(totals))
    report.row("  latency p50 / p95, no key cache (0 s)", latency(uncached_totals))
    report.row("bare Django view, same lookups: p50 / p95", latency(bare_totals))
    report.row(
        "  GetNamespace / bare view (p50)",
        f"{uncached_ratio:.2f}× uncached, {ratio:.2f}× cached  (all three interleaved, {elapsed / 1e9:.1f} s)",
    )
    report.row("  authentication per request, cached (median)", authentication_time(True))
    report.row("  authentication per request, uncached (median)", authentication_time(False))
    report.row("  authentication share of request time", f"{share:.1%} cached; {uncached_share:.1%} uncached")
    own = (sum(auth_times[False]) - sum(query_times[False])) / sum(uncached_totals)
    report.row("  uncached: of which outside the key query", f"{own:.1%} (parsing, checksum, digest, principal)")
    report.row(
        "  SQL queries per request",
        f"{rpc_work[0]:g} cached, {uncached_work[0]:g} uncached (auth: 1); bare view: {bare_work[0]:g}",
    )
    report.row("  database round trips per request, cached", f"GetNamespace: {work(rpc_work)}")
    report.row(
        "  database round trips per request, uncached",
        f"GetNamespace: {work(uncached_work)}; bare view: {work(bare_work)}",
    )
    report.row("GetJob (by id) database round trips", f"{work(job_work)} cached; {work(job_uncached_work)} uncached")
    for name, (_, trips, transactions) in (("GetNamespace", uncached_work), ("GetJob", job_uncached_work)):
        report.goal(
            trips <= ROUND_TRIPS_GOAL and transactions == 0,
            f"{name} in ≤ {ROUND_TRIPS_GOAL} database round trips, no transaction, even uncached "
            f"({trips:g} round trips, {transactions:g} transactions)",
        )
    report.goal(
        uncached_ratio <= BARE_RATIO_GOAL,
        f"GetNamespace p50 ≤ {BARE_RATIO_GOAL}× the bare view's, both looking the key up ({uncached_ratio:.2f}×)",
    )
    report.goal(
        share <= AUTH_SHARE_GOAL,
        f"authentication ≤ {AUTH_SHARE_GOAL:.0%} of GetNamespace time, default settings ({share:.1%}; "
        f"{uncached_share:.1%} without the key cache)",
    )


def measure_gunicorn(report: Report, token: str, seconds: float, workers: int, clients: int) -> None:
    from tests.support.live import ServiceProcess

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
    production_like_environment()
    import django

    django.setup()
    from django.db import connection

    with throwaway_database("cp_bench", args.allow_sqlite) as bench_db:
        if not bench_db:
            return 2
        token, job_id = seed(args.filler_keys)
        with connection.cursor() as cursor:
            cursor.execute("SELECT version()" if connection.vendor == "postgresql" else "SELECT sqlite_version()")
            server = cursor.fetchone()[0].split(" on ")[0]
        report = Report()
        measure_resolution(report, token, args.iterations)
        measure_stack(report, token, job_id, args.iterations)
        if args.gunicorn_seconds > 0:
            measure_gunicorn(report, token, args.gunicorn_seconds, args.gunicorn_workers, args.clients)
    report.print(
        f"Authentication benchmark — {server}, throwaway database {Path(str(bench_db)).name}, "
        f"{args.filler_keys + 1} API keys, Python {platform.python_version()}, {os.cpu_count()} CPUs"
    )
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
