#!/usr/bin/env python
"""Watch benchmark: how fast a job's change reaches open WatchJobs streams, and what an open
stream costs the streaming pool.

One gunicorn process of the streaming pool (deploy/gunicorn-streams.conf.py: gthread, the
database pool on) on loopback, in a throwaway PostgreSQL database (`cp_bench_<name>`, created
and dropped by Django's test-database machinery). This process opens --watches WatchJobs
streams on one namespace (asyncio, a minimal raw HTTP/1.1 Connect client, so that the
client's own cost per message stays out of the figures), then changes jobs
through the services, one change every --interval seconds (RunJob, then CancelJob: an ADDED
and a MODIFIED event). For every change and every stream it records the time from the
change's commit to the event's arrival at the client. Prints, side by side:

- latency p50 / p95 / max over all (change, stream) pairs, and p50 of the slowest stream
  per change (the whole fan-out), against the goal p50 ≤ 50 ms;
- the worker's resident memory before and with the open streams, memory per open stream,
  and the open streams one worker holds in a memory budget (--budget-mb);
- database connections the worker holds while the streams are idle (goal: none).

The client runs on the same machine and shares its CPUs: its own time is in the figures.
Exit status: 0 when every goal passes, 1 when one fails, 2 when it cannot run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import percentile, production_like_environment, throwaway_database  # noqa: E402

NAMESPACE = "bench"
P50_GOAL_MS = 50.0
POOL_MAX = 10  # DATABASE_POOL_MAX_SIZE's default: the connections a worker may keep


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--watches", type=int, default=200, help="open WatchJobs streams (one worker)")
    parser.add_argument("--changes", type=int, default=40, help="job changes made while they are open")
    parser.add_argument("--interval", type=float, default=0.25, help="seconds between two changes")
    parser.add_argument("--budget-mb", type=float, default=512.0, help="memory budget of one worker, for capacity")
    parser.add_argument("--allow-sqlite", action="store_true", help="run on SQLite anyway (it polls; not comparable)")
    return parser.parse_args(argv)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def worker_of(master: int) -> int:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == master:
                return int(entry.name)
    raise RuntimeError("gunicorn has no worker")


def held_connections() -> int:
    """The server's connections to the bench database but its NOTIFY listener: its pool's."""
    from django.db import connection

    from controlplane import notify

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            " AND application_name NOT LIKE %s",
            [notify.APPLICATION_NAME + "%"],
        )
        return cursor.fetchone()[0]


async def in_thread(function, *args):
    """`function` in a worker thread, whose database connection is closed after it."""
    from django.db import connection

    def run():
        try:
            return function(*args)
        finally:
            connection.close()

    return await asyncio.to_thread(run)


async def lean_watch(port: int, token: str, on_event) -> None:
    """One WatchJobs stream over raw HTTP/1.1 (Connect, binary): a client that costs almost
    nothing per message, so that the figures are the server's. on_event(WatchJobsResponse)."""
    from containers.api.v1 import job_pb2

    message = job_pb2.WatchJobsRequest(namespace=NAMESPACE).SerializeToString()
    body = b"\x00" + len(message).to_bytes(4, "big") + message
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = (
        "POST /containers.api.v1.JobService/WatchJobs HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: application/connect+proto\r\nConnect-Protocol-Version: 1\r\n"
        f"Authorization: Bearer {token}\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    writer.write(head.encode() + body)
    try:
        status = await reader.readline()
        if b" 200 " not in status:
            raise RuntimeError(f"WatchJobs answered {status!r}")
        while (await reader.readline()) not in (b"\r\n", b""):
            pass  # the response headers (chunked)
        buffer = b""
        while True:
            size = int((await reader.readline()).strip() or b"0", 16)
            if size == 0:
                return
            buffer += await reader.readexactly(size)
            await reader.readexactly(2)
            while len(buffer) >= 5 and len(buffer) >= 5 + (length := int.from_bytes(buffer[1:5], "big")):
                flags, frame, buffer = buffer[0], buffer[5 : 5 + length], buffer[5 + length :]
                if flags & 0x02:
                    return  # the end of the stream
                on_event(job_pb2.WatchJobsResponse.FromString(frame))
    finally:
        writer.close()


async def run_watches(port: int, token: str, args, worker: int) -> dict:
    from containers.api.v1 import job_pb2
    from controlplane.auth import Principal
    from workloads.services import jobs

    actor = Principal.system("watch bench")
    arrivals: list[dict[str, float]] = [{} for _ in range(args.watches)]
    ready = [asyncio.Event() for _ in range(args.watches)]

    def receiver(i: int):
        def on_event(event) -> None:
            if event.type == job_pb2.WATCH_EVENT_TYPE_BOOKMARK:
                ready[i].set()
            else:
                arrivals[i][f"{event.job.job_id}/{event.job.state}"] = time.time()

        return on_event

    async def watch(i: int) -> None:
        await lean_watch(port, token, receiver(i))

    idle_rss = rss_mb(worker)
    tasks = [asyncio.create_task(watch(i)) for i in range(args.watches)]
    await asyncio.wait_for(asyncio.gather(*(event.wait() for event in ready)), 120)
    await asyncio.sleep(2.0)  # settled: every stream waits
    open_rss = rss_mb(worker)
    from django.db import connection

    idle_connections = await in_thread(held_connections) if connection.vendor == "postgresql" else 0

    committed: dict[str, float] = {}

    def change(n: int) -> None:
        if n % 2 == 0:
            job = jobs.run_job(actor=actor, namespace=NAMESPACE, image="busybox")
            committed[f"{job.job_id}/{job_pb2.JOB_STATE_QUEUED}"] = time.time()
            change.last = job.job_id
        else:
            job = jobs.cancel_job(actor=actor, job_id=change.last)
            committed[f"{job.job_id}/{job_pb2.JOB_STATE_CANCELLED}"] = time.time()

    for n in range(args.changes):
        await in_thread(change, n)
        await asyncio.sleep(args.interval)
    await asyncio.sleep(2.0)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)

    latencies, fan_out, missing = [], [], 0
    for key, at in committed.items():
        per_change = []
        for got in arrivals:
            if key in got:
                per_change.append((got[key] - at) * 1000)
            else:
                missing += 1
        latencies += per_change
        if per_change:
            fan_out.append(max(per_change))
    return {
        "latencies": latencies,
        "fan_out": fan_out,
        "missing": missing,
        "idle_rss": idle_rss,
        "open_rss": open_rss,
        "idle_connections": idle_connections,
    }


def main(argv=None) -> int:
    args = parse_args(argv)
    # This process's own connections unpooled: none may stay open when the database is dropped.
    production_like_environment(DATABASE_POOL="false")
    import django

    django.setup()
    from django.db import connection

    from apikeys.services import issue_api_key
    from controlplane.auth import Principal, Role
    from namespaces.services import create_namespace
    from tests.support.live import ServiceProcess

    if connection.vendor != "postgresql" and not args.allow_sqlite:
        print("error: the benchmark is meant for PostgreSQL (DATABASE_URL=postgres://...).", file=sys.stderr)
        return 2
    with throwaway_database("cp_bench", args.allow_sqlite, sqlite_name="cp_bench_watch.sqlite3", sqlite_warning=None):
        service = None
        try:
            system = Principal.system("watch bench")
            create_namespace(actor=system, name=NAMESPACE)
            _, token = issue_api_key(actor=system, namespace=NAMESPACE, name="bench", role=Role.OPERATOR)
            connection.close()
            threads = max(256, args.watches + 16)
            service = ServiceProcess(
                env={"DATABASE_POOL": "true", "LOG_LEVEL": "WARNING"},
                workers=1,
                args=(
                    *("-c", "deploy/gunicorn-streams.conf.py", "--threads", str(threads)),
                    *("--graceful-timeout", "2", "--access-logfile", "/dev/null"),
                ),
            ).start()
            worker = worker_of(service.process.pid)
            figures = asyncio.run(run_watches(service.port, token, args, worker))
        finally:
            if service is not None:
                service.stop()

    latencies, fan_out = figures["latencies"], figures["fan_out"]
    per_stream_kb = (figures["open_rss"] - figures["idle_rss"]) * 1024 / args.watches
    capacity = (args.budget_mb - figures["idle_rss"]) * 1024 / per_stream_kb if per_stream_kb > 0 else float("inf")
    p50 = statistics.median(latencies) if latencies else float("inf")
    goals = [
        (p50 <= P50_GOAL_MS, f"p50 change → client {p50:.1f} ms ≤ {P50_GOAL_MS:g} ms with {args.watches} watches"),
        (figures["missing"] == 0, f"every stream got every change ({figures['missing']} missing)"),
        (
            figures["idle_connections"] <= POOL_MAX,
            f"idle streams hold no connection: the worker has {figures['idle_connections']} open, its pool's at most "
            f"({POOL_MAX}), with {args.watches} streams",
        ),
    ]
    print(
        f"\nWatch benchmark — {connection.vendor}, Python {platform.python_version()}, {os.cpu_count()} CPUs "
        f"(shared with the client and other work on this machine)"
    )
    rows = [
        ("open watches (one gthread worker)", f"{args.watches}"),
        ("changes (RunJob / CancelJob)", f"{args.changes}, every {args.interval:g} s"),
        ("latency p50 / p95 / max", f"{p50:.1f} / {percentile(latencies, 0.95):.1f} / {max(latencies):.1f} ms"),
        ("whole fan-out (slowest stream) p50 / p95", f"{statistics.median(fan_out):.1f} / "
         f"{percentile(fan_out, 0.95):.1f} ms"),
        ("worker RSS idle / with the streams", f"{figures['idle_rss']:.1f} / {figures['open_rss']:.1f} MB"),
        ("memory per open stream", f"{per_stream_kb:.0f} kB"),
        (f"streams per worker in {args.budget_mb:g} MB", f"{capacity:,.0f} (threads permitting: --threads)"),
    ]  # fmt: skip
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"  {label:<{width}}  {value}")
    for passed, text in goals:
        print(f"  [{'PASS' if passed else 'FAIL'}] {text}")
    return 0 if all(passed for passed, _ in goals) else 1


if __name__ == "__main__":
    sys.exit(main())
