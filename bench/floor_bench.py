#!/usr/bin/env python
"""The cheap RPC at the floor (issue 24): GetNamespace and GetJob against /healthz over HTTP,
ListJobs (a page of 20 jobs) beside them, and what PostgreSQL spends planning their statements
(pg_stat_statements).

Runs on PostgreSQL (DATABASE_URL) in a throwaway database (`cp_floor_<name>`, created and
dropped by Django's test-database machinery), seeded like auth_bench.py (a namespace with
children, an ADMIN key, filler keys, one job) plus 19 more jobs. Then, in one run, with gunicorn on loopback:

- sync workers (deploy/gunicorn.conf.py's class), a new connection per call: /healthz,
  GetNamespace, GetJob and ListJobs interleaved call by call, p50/p95 and the ratios to /healthz;
- gthread workers with keep-alive: the same four on one kept-alive connection;
- sync workers with DATABASE_PREPARE_THRESHOLD=off (server-side binding, never prepared:
  every call planned, as before issue 24): the same as the first;
- per configuration, from pg_stat_statements (reset after the warm-up): calls, plans and the
  mean planning and execution time of each RPC's statement. Without the extension (it needs
  shared_preload_libraries = 'pg_stat_statements' in the server) the bench says so and
  reports the latencies only.

The in-process figures (the WSGI application called directly, bench/harness.py) come first,
so the runtime's share shows apart from the network's.
Goals: GetNamespace and GetJob p50 ≤ 2.0× /healthz's with a connection per call, ≤ 1.6× with
keep-alive; planned at most once per 50 calls once warm (plans/calls ≤ 0.02).
Exit status: 0 when every goal passes, 1 when one fails, 2 when it cannot run.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    StatStatements,
    connect_caller,
    percentile,
    production_like_environment,
    throwaway_database,
    wsgi_caller,
)

GET_NAMESPACE = "/containers.api.v1.NamespaceService/GetNamespace"
GET_JOB = "/containers.api.v1.JobService/GetJob"
LIST_JOBS = "/containers.api.v1.JobService/ListJobs"
LISTED_JOBS = 20  # ListJobs' page: the seed's job and these more
GOAL_CALLS = ("GetNamespace", "GetJob")  # ListJobs is shown beside them, without a goal
NEW_CONNECTION_GOAL = 2.0
KEEP_ALIVE_GOAL = 1.6
PLANS_PER_CALL_GOAL = 0.02
# Which statement is whose: what each RPC's one statement holds (the key is cached).
STATEMENTS = {
    "GetNamespace": ('FROM "namespaces_namespace"',),
    "GetJob": ('FROM "containers_job"', '"containers_job"."job_id" = $'),
    "ListJobs": ('FROM "containers_job"', "LIMIT"),
}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300, help="timed calls per endpoint and configuration")
    parser.add_argument("--warmup", type=int, default=30, help="calls per endpoint before timing")
    parser.add_argument("--filler-keys", type=int, default=2000, help="other API keys in the table")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    return parser.parse_args(argv)


def more_jobs(count: int) -> None:
    """Jobs that ran and succeeded (so the namespace's running-jobs quota stays free)."""
    from django.utils import timezone

    from controlplane.auth import Principal
    from workloads.models import Job
    from workloads.services.jobs import run_job

    for _ in range(count):
        job = run_job(actor=Principal.system("bench"), namespace="bench", image="busybox", command=["true"])
        now = timezone.now()
        Job.objects.filter(pk=job.pk).update(
            state=Job.State.SUCCEEDED, attempt=1, exit_code=0, started_at=now, finished_at=now
        )


def interleaved(calls: dict, count: int) -> dict[str, list[int]]:
    """Latency samples (ns) per call, one of each in turn, so the machine's swings hit all alike."""
    samples: dict[str, list[int]] = {name: [] for name in calls}
    for _ in range(count):
        for name, call in calls.items():
            started = time.perf_counter_ns()
            call()
            samples[name].append(time.perf_counter_ns() - started)
    return samples


def http_calls(port: int, token: str, job_id: str, keep_alive: bool) -> dict:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    requests = {
        "/healthz": ("GET", "/healthz", None, {}),
        "GetNamespace": ("POST", GET_NAMESPACE, json.dumps({"namespace": "bench"}), headers),
        "GetJob": ("POST", GET_JOB, json.dumps({"jobId": job_id}), headers),
        "ListJobs": ("POST", LIST_JOBS, json.dumps({"namespace": "bench"}), headers),
    }
    kept = http.client.HTTPConnection("127.0.0.1", port, timeout=10) if keep_alive else None

    def caller(method, path, body, request_headers):
        def call():
            conn = kept or http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            try:
                conn.request(method, path, body=body, headers=request_headers)
                response = conn.getresponse()
                response.read()
                if response.status != 200:
                    raise SystemExit(f"{path} answered HTTP {response.status}")
                if keep_alive and response.will_close:
                    raise SystemExit(f"{path}: the server closed the kept-alive connection")
            finally:
                if kept is None:
                    conn.close()

        return call

    return {name: caller(*request) for name, request in requests.items()}


def measure_http(label, env, args, bench_url, token, job_id, options, statements, keep_alive):
    from tests.support.live import ServiceProcess

    service = ServiceProcess(
        env={"DATABASE_URL": bench_url, "DATABASE_POOL": "true", "LOG_LEVEL": "WARNING", **env},
        workers=options.workers,
        args=args,
    ).start()
    try:
        calls = http_calls(service.port, token, job_id, keep_alive)
        interleaved(calls, options.warmup)
        if statements.available:
            statements.reset()
        samples = interleaved(calls, options.calls)
        planned = {}
        if statements.available:
            found = {rpc: statements.find("SELECT", *fragments) for rpc, fragments in STATEMENTS.items()}
            planned = {rpc: figures for rpc, figures in found.items() if figures is not None}
    finally:
        service.stop()
    return label, samples, planned


def report(label: str, samples: dict[str, list[int]], goal: float | None, goals: list) -> None:
    floor = percentile(samples["/healthz"], 0.5)
    print(f"\n{label}")
    print(f"  {'':<14}{'p50 µs':>9}{'p95 µs':>9}{'/ healthz':>11}")
    for name, values in samples.items():
        p50 = percentile(values, 0.5)
        print(f"  {name:<14}{p50 / 1000:9.0f}{percentile(values, 0.95) / 1000:9.0f}{p50 / floor:10.2f}×")
        if goal is not None and name in GOAL_CALLS:
            goals.append((p50 / floor <= goal, f"{name} p50 ≤ {goal}× /healthz's, {label} ({p50 / floor:.2f}×)"))


def report_plans(planned: dict, statements: StatStatements, check: bool, goals: list) -> None:
    if not statements.available:
        print(f"  planning: not measured ({statements.reason})")
        return
    for rpc in STATEMENTS:
        if rpc not in planned:
            print(f"  {rpc} statement: not found in pg_stat_statements")
            continue
        calls, plans, _, _ = planned[rpc]
        print(f"  {rpc} statement: {statements.describe(planned[rpc])}")
        if check:
            goals.append(
                (plans / calls <= PLANS_PER_CALL_GOAL, f"{rpc}'s statement planned ≤ {PLANS_PER_CALL_GOAL} per call "
                 f"once warm ({plans} plans in {calls} calls)")
            )  # fmt: skip


def main(argv=None) -> int:
    options = parse_args(argv)
    production_like_environment()
    import django

    django.setup()
    from django.db import connection

    from bench.auth_bench import seed

    if connection.vendor != "postgresql":
        print(f"error: the benchmark needs PostgreSQL (DATABASE_URL); this is {connection.vendor}", file=sys.stderr)
        return 2
    goals: list[tuple[bool, str]] = []
    with throwaway_database("cp_floor", allow_sqlite=False) as bench_name:
        token, job_id = seed(options.filler_keys)
        more_jobs(LISTED_JOBS - 1)
        statements = StatStatements(connection)
        with connection.cursor() as cursor:
            cursor.execute("SELECT version()")
            server = cursor.fetchone()[0].split(" on ")[0]
        print(
            f"Floor benchmark — {server}, Python {platform.python_version()}, {os.cpu_count()} CPUs, "
            f"load average {os.getloadavg()[0]:.1f}; {options.calls} calls per endpoint and configuration"
        )
        in_process = {
            "/healthz": wsgi_caller("GET", "/healthz", {}),
            "GetNamespace": connect_caller(GET_NAMESPACE, token, {"namespace": "bench"}),
            "GetJob": connect_caller(GET_JOB, token, {"jobId": job_id}),
            "ListJobs": connect_caller(LIST_JOBS, token, {"namespace": "bench"}),
        }
        interleaved(in_process, options.warmup)
        report("in-process (WSGI application called directly, key cache warm)", interleaved(in_process, options.calls),
               None, goals)  # fmt: skip
        bench_url = urlsplit(os.environ["DATABASE_URL"])._replace(path=f"/{bench_name}").geturl()
        keep_alive = ("--worker-class", "gthread", "--threads", "2", "--keep-alive", "5")
        runs = (
            ("gunicorn sync, a new connection per call", {}, (), False, NEW_CONNECTION_GOAL),
            ("gunicorn gthread, keep-alive", {}, keep_alive, True, KEEP_ALIVE_GOAL),
            ("before: never prepared (DATABASE_PREPARE_THRESHOLD=off), sync, a new connection per call",
             {"DATABASE_PREPARE_THRESHOLD": "off"}, (), False, None),
        )  # fmt: skip
        for label, env, args, kept, goal in runs:
            label, samples, planned = measure_http(
                label, env, args, bench_url, token, job_id, options, statements, kept
            )
            report(label, samples, goal, goals)
            report_plans(planned, statements, check=goal is not None, goals=goals)
    print()
    for passed, text in goals:
        print(f"[{'PASS' if passed else 'FAIL'}] {text}")
    if not statements.available:
        print(f"[SKIP] planning per call: {statements.reason}")
    return 0 if all(passed for passed, _ in goals) else 1


if __name__ == "__main__":
    sys.exit(main())
