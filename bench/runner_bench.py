#!/usr/bin/env python
"""Runner API benchmark, server side: what a Heartbeat costs, and what idle runners cost.

Runs on PostgreSQL (DATABASE_URL) in a throwaway database (`cp_bench_<name>`, created and
dropped by Django's test-database machinery). Prints:

- Heartbeat through the whole WSGI stack in-process (authentication with the key cache, the
  RPC runtime, the lease renewal): SQL statements and database round trips per call (BEGIN/
  COMMIT included: libpq's protocol trace, tests/roundtrips.py), p50/p95; beside GetJob, a
  cheap authenticated read, as the peer;
- Heartbeat against a real gunicorn (gthread workers, as docs/runners.md recommends for runner
  traffic) over loopback: p50/p95;
- idle cost: N runners long-polling AcquireWork (waitSeconds 20) with no work for S seconds:
  the server's CPU (master and workers, from /proc) as a share of one core, and SQL statements
  per runner-minute (counted in the workers by bench/runner_gunicorn.py).

- the podman side (bench/runner_podman.py): dispatch, RunJob → SUCCEEDED for `true` through
  real `cprunner --engine podman` processes, beside `podman run --rm` of the same image (the
  floor), p50/p95; throughput, N `true` jobs through 2 runners beside podman's own rate at the
  same concurrency.

Goals (issue 19): Heartbeat in 1 round trip; idle runners cost ≤ 5% of one core; dispatch p50
≤ 1.3× the floor; throughput ≥ 0.8× podman's. The machine may be shared: quote figures with
its load.
Exit status: 0 when every goal passes, 1 when one fails, 2 when it cannot run.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.auth_bench import Report, database_work, micros, timed_side_by_side  # noqa: E402
from bench.harness import connect_caller, percentile, production_like_environment, throwaway_database  # noqa: E402
from bench.runner_podman import DISPATCH_GOAL, THROUGHPUT_GOAL, measure_podman  # noqa: E402

HEARTBEAT = "/containers.runtime.v1.RunnerService/Heartbeat"
ACQUIRE = "/containers.runtime.v1.RunnerService/AcquireWork"
GET_JOB = "/containers.api.v1.JobService/GetJob"
IDLE_CPU_GOAL = 0.05


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=2000, help="timed Heartbeats in-process")
    parser.add_argument("--gunicorn-iterations", type=int, default=500, help="timed Heartbeats over loopback")
    parser.add_argument("--runners", type=int, default=50, help="idle long-polling runners")
    parser.add_argument("--idle-seconds", type=float, default=60, help="how long they wait (0: skip)")
    parser.add_argument("--dispatch-samples", type=int, default=30, help="jobs timed one at a time (0: no podman part)")
    parser.add_argument("--throughput-jobs", type=int, default=200, help="jobs through 2 runners at once")
    parser.add_argument("--concurrency", type=int, default=4, help="each runner's --concurrency")
    parser.add_argument("--allow-sqlite", action="store_true", help="run on SQLite anyway (no long poll there)")
    return parser.parse_args(argv)


def seed() -> tuple[str, str, str, str]:
    """A namespace with one running job held by a runner: (runner key, lease token, job id, viewer key)."""
    from apikeys.services import issue_api_key
    from controlplane.auth import Kind, Principal, Role
    from namespaces.services import create_namespace
    from runners.services import issue_runner
    from workloads.services import jobs, leases

    system = Principal.system("runner_bench")
    create_namespace(actor=system, name="bench")
    runner, runner_key = issue_runner(actor=system, name="bench runner")
    job = jobs.run_job(actor=system, namespace="bench", image="busybox", command=["true"])
    work = leases.claim(Principal(kind=Kind.RUNNER, key_id=runner.key.key_id), runner, [leases.JOB])
    _, viewer_key = issue_api_key(actor=system, namespace="bench", name="viewer", role=Role.VIEWER)
    return runner_key, work.lease_token, job.job_id, viewer_key


def measure_in_process(report: Report, runner_key, token, job_id, viewer_key, iterations) -> tuple[float, float]:
    heartbeat = connect_caller(HEARTBEAT, runner_key, {"workId": job_id, "leaseToken": token})
    get_job = connect_caller(GET_JOB, viewer_key, {"jobId": job_id})
    for call, what in ((heartbeat, "Heartbeat"), (get_job, "GetJob")):
        status, body = call()
        if not status.startswith("200"):
            raise SystemExit(f"{what} failed: {status} {body[:300]!r}")
    time.sleep(1)  # past the first call's last-seen write and its NOTIFY, as a long-lived runner is
    # As a long-lived server is: the first call started this process's NOTIFY listener (the key
    # cache stores nothing until it listens), and a connection's first executions of a statement
    # prepare it (DATABASE_PREPARE_THRESHOLD; one more round trip, once per connection).
    for _ in range(6):
        heartbeat(), get_job()
    statements, trips, transactions = database_work(heartbeat)
    peer_statements, peer_trips, _ = database_work(get_job)
    samples = timed_side_by_side([heartbeat, get_job], iterations)
    report.row("Heartbeat: SQL statements / round trips per call", f"{statements:.2f} / {trips:.2f}")
    report.row("  transactions per call", f"{transactions:.2f}")
    report.row("GetJob (peer): SQL statements / round trips", f"{peer_statements:.2f} / {peer_trips:.2f}")
    for label, mine in (("Heartbeat", samples[0]), ("GetJob (peer)", samples[1])):
        report.row(
            f"{label} in-process p50 / p95",
            f"{micros(percentile(mine, 0.5)):.0f} / {micros(percentile(mine, 0.95)):.0f} µs",
        )
    return statements, trips


def post(port: int, path: str, token: str, message: dict, timeout: float = 30) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        conn.request("POST", path, body=json.dumps(message).encode(), headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def cpu_seconds(master: int) -> float:
    """utime + stime of the gunicorn master and its children, from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        pid, ppid = int(entry.name), int(fields[1])
        if pid == master or ppid == master:
            total += int(fields[11]) + int(fields[12])
    return total / ticks


def statements_counted(directory: str) -> int:
    return sum(int(p.read_text() or 0) for p in Path(directory).iterdir())


def measure_gunicorn(report: Report, runner_key, token, job_id, iterations, runners, idle_seconds) -> float | None:
    from django.db import connection

    from runners.services import issue_runner
    from tests.support.live import ServiceProcess

    settings = connection.settings_dict
    url = f"postgres://{settings['USER']}@{settings['HOST']}:{settings['PORT']}/{settings['NAME']}"
    if connection.vendor != "postgresql":
        url = f"sqlite:///{settings['NAME']}"
    counts = tempfile.mkdtemp(prefix="runner-bench-")
    threads = runners + 8
    service = ServiceProcess(
        # The connection pool, as in production: a long poll hands its connection back while it waits.
        env={"DATABASE_URL": url, "DATABASE_POOL": "true", "RUNNER_BENCH_COUNTS": counts},
        workers=2,
        args=("-c", str(ROOT / "bench" / "runner_gunicorn.py"), "--worker-class", "gthread", "--threads", str(threads)),
    ).start()
    try:
        latencies = []
        body = {"workId": job_id, "leaseToken": token}
        for _ in range(iterations):
            started = time.perf_counter_ns()
            status, answer = post(service.port, HEARTBEAT, runner_key, body)
            latencies.append(time.perf_counter_ns() - started)
            if status != 200:
                raise SystemExit(f"Heartbeat via gunicorn failed: {status} {answer[:300]!r}")
        report.row(
            "Heartbeat via gunicorn gthread (loopback) p50 / p95",
            f"{micros(percentile(latencies, 0.5)):.0f} / {micros(percentile(latencies, 0.95)):.0f} µs",
        )
        finish = {**body, "result": "RESULT_EXITED"}
        status, answer = post(service.port, "/containers.runtime.v1.RunnerService/FinishWork", runner_key, finish)
        if status != 200:  # the idle runners must find no work
            raise SystemExit(f"FinishWork via gunicorn failed: {status} {answer[:300]!r}")
        if idle_seconds <= 0 or runners <= 0:
            return None
        from controlplane.auth import Principal

        keys = [issue_runner(actor=Principal.system("runner_bench"), name=f"idle {i}")[1] for i in range(runners)]
        stop_at = time.monotonic() + idle_seconds
        failures: list[str] = []

        def idle(key):
            while True:
                # As cprunner does, every call a long poll; none starts with under a second left
                # (a wait of 0 answers at once: the window's last second was a busy loop of them).
                wait = min(20, int(stop_at - time.monotonic()))
                if wait < 1:
                    return
                status, answer = post(service.port, ACQUIRE, key, {"kinds": ["WORK_KIND_JOB"], "waitSeconds": wait})
                if status != 200 or b'"work"' in answer:
                    failures.append(f"{status} {answer[:200]!r}")
                    return
                retry = json.loads(answer).get("retryAfter", "0s")
                time.sleep(float(retry.rstrip("s")))

        for key in keys:  # each runner's first call (key lookup, last seen) before measuring
            post(service.port, ACQUIRE, key, {"kinds": ["WORK_KIND_JOB"], "waitSeconds": 0})
        cpu_before, statements_before = cpu_seconds(service.process.pid), statements_counted(counts)
        started = time.monotonic()
        pool = [threading.Thread(target=idle, args=(key,)) for key in keys]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
        elapsed = time.monotonic() - started
        cpu = cpu_seconds(service.process.pid) - cpu_before
        statements = statements_counted(counts) - statements_before
        if failures:
            raise SystemExit(f"idle runners: {len(failures)} failed, e.g. {failures[0]}")
        share = cpu / elapsed
        report.row(
            f"idle: {runners} runners long-polling for {elapsed:.0f} s",
            f"server CPU {share:.1%} of one core ({cpu:.2f} s)",
        )
        per_runner_minute = statements / runners / (elapsed / 60)
        report.row("  SQL statements per runner-minute", f"{per_runner_minute:.1f} ({statements} in all)")
        return share
    finally:
        service.stop()
        for path in Path(counts).iterdir():
            path.unlink()
        os.rmdir(counts)


def main(argv=None) -> int:
    args = parse_args(argv)
    production_like_environment()
    import django

    django.setup()
    from django.db import connection

    with throwaway_database(
        "cp_bench",
        args.allow_sqlite,
        sqlite_name="cp_runner_bench.sqlite3",
        sqlite_warning="figures are not comparable (no long poll there).",
    ) as bench_db:
        if not bench_db:
            return 2
        runner_key, token, job_id, viewer_key = seed()
        report = Report()
        statements, trips = measure_in_process(report, runner_key, token, job_id, viewer_key, args.iterations)
        report.goal(trips <= 1, f"Heartbeat in 1 round trip (measured {trips:.2f}; {statements:.2f} statements)")
        share = measure_gunicorn(
            report, runner_key, token, job_id, args.gunicorn_iterations, args.runners, args.idle_seconds
        )
        if share is not None:
            report.goal(
                share <= IDLE_CPU_GOAL,
                f"{args.runners} idle runners cost ≤ {IDLE_CPU_GOAL:.0%} of one core (measured {share:.1%})",
            )
        if args.dispatch_samples > 0:
            dispatch, throughput = measure_podman(report, args.dispatch_samples, args.throughput_jobs, args.concurrency)
            report.goal(
                dispatch <= DISPATCH_GOAL, f"dispatch p50 ≤ {DISPATCH_GOAL}× podman run (measured {dispatch:.2f}×)"
            )
            report.goal(
                throughput >= THROUGHPUT_GOAL,
                f"throughput ≥ {THROUGHPUT_GOAL}× podman's own rate (measured {throughput:.2f}×)",
            )
    load = os.getloadavg()
    report.print(
        f"Runner API benchmark — {connection.vendor}, throwaway database {Path(str(bench_db)).name}, "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}"
    )
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
