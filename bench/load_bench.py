#!/usr/bin/env python
"""Throughput benchmark: a mixed Connect workload against a real gunicorn, driven by wrk.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/controlplane .venv/bin/python bench/load_bench.py \\
        [--uploads 1000000] [--duration 5] [--rounds 3] [--connections 1,4,16,64] [--configs sync:2,gthread:2x4]

Runs on PostgreSQL only, in a database kept beside DATABASE_URL's (`cp_load_<name>`, created and
migrated when missing), so that a seeded bucket is reused by the next run: seeding a million
uploads takes minutes. Each gunicorn configuration (deploy/gunicorn.conf.py with the worker class,
workers and threads overridden, bound to 127.0.0.1) runs side by side with the others; each round
runs every connection count against each of them in turn. wrk sends 60% ListUploads (first page of
50), 20% GetNamespace, 10% ListJobs, 10% RunJob (a fresh requestId each), each with the least key
that may call it (bench/load/mixed.lua), and this prints req/s, p50/p99 (overall and per method)
and every error: non-2xx statuses per method, and wrk's connect/read/write/timeout errors.

Goal: 0 errors at every level of every configuration. Exit status: 0 met, 1 missed, 2 cannot run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import production_like_environment  # noqa: E402

LUA_SCRIPT = ROOT / "bench" / "load" / "mixed.lua"
GUNICORN_CONF = ROOT / "deploy" / "gunicorn.conf.py"
NAMESPACE = "load"
# wrk's client timeout: above every latency a healthy server shows at 64 connections, below
# gunicorn's 30 s worker timeout, so a stuck request shows up as a timeout error here.
CLIENT_TIMEOUT_S = 10


@dataclass(frozen=True)
class Method:
    name: str
    weight: int
    path: str
    role: str  # the least role that may call it
    body: dict

    def plan_line(self, token: str) -> str:
        return "\t".join((self.name, str(self.weight), self.path, token, json.dumps(self.body, separators=(",", ":"))))


def workload(bucket_id: str) -> list[Method]:
    """The mix of calls: 60/20/10/10 (weights below). `{requestId}` is replaced per call by mixed.lua."""
    return [
        Method(
            "ListUploads",
            6,
            "/uploads.api.v1.BucketUploadsService/ListUploads",
            "VIEWER",
            {"bucket": {"bucketId": bucket_id}, "pageSize": 50},
        ),
        Method(
            "GetNamespace", 2, "/containers.api.v1.NamespaceService/GetNamespace", "ADMIN", {"namespace": NAMESPACE}
        ),
        Method(
            "ListJobs", 1, "/containers.api.v1.JobService/ListJobs", "VIEWER", {"namespace": NAMESPACE, "pageSize": 50}
        ),
        Method(
            "RunJob",
            1,
            "/containers.api.v1.JobService/RunJob",
            "OPERATOR",
            {"namespace": NAMESPACE, "image": "busybox:1.36", "command": ["true"], "requestId": "{requestId}"},
        ),
    ]


@dataclass(frozen=True)
class ServerConfig:
    worker_class: str
    workers: int
    threads: int = 1

    @classmethod
    def parse(cls, text: str) -> ServerConfig:
        """`sync:5` (5 sync workers) or `gthread:2x4` (2 workers of 4 threads)."""
        worker_class, _, size = text.partition(":")
        workers, _, threads = size.partition("x")
        if worker_class not in ("sync", "gthread") or not workers.isdigit() or (threads and not threads.isdigit()):
            raise argparse.ArgumentTypeError(f"{text!r}: expected sync:WORKERS or gthread:WORKERSxTHREADS")
        if worker_class == "sync" and threads not in ("", "1"):
            raise argparse.ArgumentTypeError(f"{text!r}: sync workers have one thread")
        return cls(worker_class, int(workers), int(threads or 1))

    def __str__(self) -> str:
        return f"{self.worker_class} {self.workers}" + (f"x{self.threads}" if self.worker_class == "gthread" else "")

    def gunicorn_args(self) -> tuple[str, ...]:
        return (
            "--config", str(GUNICORN_CONF),
            "--worker-class", self.worker_class,
            "--threads", str(self.threads),
            "--timeout", "30",
            # Not the shared default ($HOME/.gunicorn/gunicorn.ctl) that other gunicorns on this host use.
            "--no-control-socket",
        )  # fmt: skip


def wrk_command(url: str, connections: int, duration: float, wrk: str = "wrk") -> list[str]:
    """One thread per connection, so that mixed.lua can attribute each response to its method."""
    return [
        wrk,
        "--threads", str(connections),
        "--connections", str(connections),
        "--duration", f"{duration:g}s",
        "--timeout", f"{CLIENT_TIMEOUT_S}s",
        "--script", str(LUA_SCRIPT),
        url,
    ]  # fmt: skip


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uploads", type=int, default=1_000_000, help="uploads in the listed bucket")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds of load per level and round")
    parser.add_argument("--rounds", type=int, default=3, help="passes over every level and configuration")
    parser.add_argument(
        "--connections", default="1,4,16,64", type=lambda s: [int(n) for n in s.split(",")], help="levels"
    )
    parser.add_argument(
        "--configs",
        default="sync:2,sync:3,sync:5,gthread:2x4,gthread:4x2",
        type=lambda s: [ServerConfig.parse(part) for part in s.split(",")],
        help="gunicorn configurations: sync:WORKERS, gthread:WORKERSxTHREADS",
    )
    parser.add_argument("--database", help="bench database name (default cp_load_<DATABASE_URL's name>)")
    parser.add_argument("--wrk", default="wrk", help="the wrk executable")
    return parser.parse_args(argv)


# --- database and data ------------------------------------------------------------------


def bench_database_url(source: str, name: str | None) -> str:
    parts = urlsplit(source)
    name = name or f"cp_load_{parts.path.lstrip('/') or 'controlplane'}"
    return urlunsplit(parts._replace(path=f"/{name}"))


def configure_environment(database_url: str) -> None:
    """Production-like settings, the psycopg pool on; gunicorn inherits them."""
    os.environ["DATABASE_URL"] = database_url
    production_like_environment(SECURE_HSTS_SECONDS="0", DATABASE_POOL="true")


def prepare_database() -> None:
    from django.conf import settings
    from django.core.management import call_command

    from controlplane.dbsetup import ensure_database

    ensure_database(settings.DATABASES["default"])
    call_command("migrate", verbosity=0)


def prepare_namespace() -> None:
    from controlplane.auth import Principal, Role
    from namespaces.models import Namespace
    from namespaces.services import Binding, PullSecret, Target, create_namespace

    if Namespace.objects.filter(name=NAMESPACE).exists():
        return
    create_namespace(
        actor=Principal.system("load-bench"),
        name=NAMESPACE,
        groups=[Binding("load-admins", Role.ADMIN), Binding("load-devs", Role.OPERATOR)],
        internal_targets=[Target("db", "db.internal", (5432,)), Target("cache", "cache.internal", (6379,))],
        image_pull_secrets=[PullSecret("ghcr.io", "vault://kv/load/ghcr")],
    )


def prepare_bucket(uploads: int) -> tuple[str, str]:
    """The bucket `uploads-<N>` with exactly N uploads: reused when complete, else (re)seeded.

    Returns its id and what was done, for the report."""
    from django.db import connection

    from controlplane.auth import Principal
    from uploads.models import Bucket
    from uploads.services import create_bucket

    name = f"uploads-{uploads}"
    bucket = Bucket.objects.filter(namespace__name=NAMESPACE, name=name).first()
    if bucket is not None:
        if bucket.uploads.count() == uploads:
            return str(bucket.pk), f"reused ({uploads:,} uploads)"
        delete_bucket(bucket)  # an interrupted seeding: start again
    bucket = create_bucket(actor=Principal.system("load-bench"), namespace=NAMESPACE, name=name)
    connection.close()
    started = time.monotonic()
    # Ids are drawn from the seed: each bucket size its own, or two buckets would share ids.
    seed = ["--count", str(uploads), "--seed", str(uploads)]
    subprocess.run(
        [sys.executable, "manage.py", "seed_uploads", "--bucket", str(bucket.pk), *seed],
        cwd=ROOT,
        check=True,
    )
    return str(bucket.pk), f"seeded {uploads:,} uploads in {time.monotonic() - started:,.0f} s"


def delete_bucket(bucket) -> None:
    from django.db import connection

    # Set-based deletes: the ORM's cascade would load every upload into memory.
    with connection.cursor() as cursor:
        for table in ("uploads_alias", "uploads_metaupload"):
            cursor.execute(
                f"DELETE FROM {table} WHERE upload_id IN (SELECT upload_id FROM uploads_upload WHERE bucket_id = %s)",
                [bucket.pk],
            )
        cursor.execute("DELETE FROM uploads_upload WHERE bucket_id = %s", [bucket.pk])
    bucket.delete()


def issue_keys() -> dict[str, str]:
    """A fresh key per role (plaintexts exist only at issue); previous runs' keys are revoked."""
    from apikeys.models import ApiKey
    from apikeys.services import issue_api_key, revoke_api_key
    from controlplane.auth import Principal, Role

    actor = Principal.system("load-bench")
    previous = ApiKey.objects.filter(namespace__name=NAMESPACE, name__startswith="load bench ", revoked_at=None)
    for key_id in previous.values_list("key_id", flat=True):
        revoke_api_key(actor=actor, key_id=key_id)
    return {
        role: issue_api_key(actor=actor, namespace=NAMESPACE, name=f"load bench {role.lower()}", role=Role[role])[1]
        for role in ("VIEWER", "OPERATOR", "ADMIN")
    }


def write_plan(directory: Path, methods: list[Method], keys: dict[str, str]) -> Path:
    """The plan mixed.lua reads. It holds bearer tokens: `directory` must be private (mkdtemp's 0700)."""
    plan = directory / "plan.tsv"
    plan.write_text("".join(method.plan_line(keys[method.role]) + "\n" for method in methods))
    return plan


# --- load -------------------------------------------------------------------------------


@dataclass
class Level:
    """One configuration at one connection count, over every round."""

    config: ServerConfig
    connections: int
    rounds: list[dict] = field(default_factory=list)  # mixed.lua's LOAD-RESULT of each round
    db_connections: int = 0

    @property
    def rate(self) -> float:
        return sum(r["requests"] for r in self.rounds) / (sum(r["duration_us"] for r in self.rounds) / 1e6)

    @property
    def rates(self) -> list[float]:
        return [r["requests"] / (r["duration_us"] / 1e6) for r in self.rounds]

    def latency_ms(self, name: str) -> float:
        """The median over rounds of a round's percentile: one round slowed by the rest of the
        machine does not decide it."""
        return statistics.median(r[name] for r in self.rounds) / 1000

    @property
    def statuses(self) -> Counter:
        return sum((Counter(r["statuses"]) for r in self.rounds), Counter())

    @property
    def non_2xx(self) -> dict[str, int]:
        return {key: n for key, n in self.statuses.items() if not key.split()[-1].startswith("2")}

    @property
    def socket_errors(self) -> dict[str, int]:
        kinds = ("connect_errors", "read_errors", "write_errors", "timeouts")
        totals = {kind: sum(r[kind] for r in self.rounds) for kind in kinds}
        return {kind: n for kind, n in totals.items() if n}

    @property
    def errors(self) -> int:
        return sum(self.non_2xx.values()) + sum(self.socket_errors.values())

    def method_latency_ms(self, method: str) -> tuple[float, float]:
        """p50 and p99 of one method (medians over rounds), timed by mixed.lua."""
        timings = [r["methods"][method] for r in self.rounds if method in r["methods"]]
        return statistics.median(t["p50_ms"] for t in timings), statistics.median(t["p99_ms"] for t in timings)

    def per_method(self) -> Counter:
        totals = Counter()
        for key, n in self.statuses.items():
            totals[key.split()[0]] += n
        return totals


def run_wrk(args, url: str, plan: Path, connections: int, duration: float) -> dict:
    env = {**os.environ, "LOAD_PLAN": str(plan), "LOAD_RUN": secrets.token_hex(6)}
    command = wrk_command(url, connections, duration, args.wrk)
    finished = subprocess.run(command, env=env, capture_output=True, text=True, timeout=duration + 60, check=False)
    line = next((line for line in finished.stdout.splitlines() if line.startswith("LOAD-RESULT ")), None)
    if finished.returncode != 0 or line is None:
        raise RuntimeError(f"wrk failed ({finished.returncode}): {finished.stderr.strip() or finished.stdout[-500:]}")
    return json.loads(line.removeprefix("LOAD-RESULT "))


def database_connections(application_name: str) -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = %s",
            [application_name],
        )
        return cursor.fetchone()[0]


def resident_mb(pid: int) -> float:
    """RSS of a gunicorn master and its workers (Linux /proc), in MB."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    total_kb = 0
    for process in (pid, *map(int, children)):
        status = Path(f"/proc/{process}/status").read_text()
        total_kb += int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))
    return total_kb / 1024


def measure(args, plan: Path) -> tuple[list[Level], dict[ServerConfig, float]]:
    """Every configuration's gunicorn runs side by side (idle ones cost no CPU), and each level
    is measured for each configuration in turn: what else loads the machine meanwhile then
    weighs on every configuration of a level alike, rather than on whichever ran at that time."""
    from tests.support.live import ServiceProcess

    services = {}
    try:
        for config in args.configs:
            # libpq's application_name tells this server's database connections from the others'.
            env = {
                "DATABASE_POOL": "true",
                "PGAPPNAME": f"load-bench {config}",
                # wrk stamps X-Request-Start as nginx does: queue time counts, and sheds, as behind it.
                "TRUSTED_PROXIES": "127.0.0.1",
            }
            services[config] = ServiceProcess(workers=config.workers, args=config.gunicorn_args(), env=env).start()
            # Every worker imports its first views and opens its pool before the first level.
            run_wrk(args, services[config].url, plan, max(args.connections), min(args.duration, 3))
        levels = {(config, n): Level(config, n) for config in args.configs for n in args.connections}
        for round_number in range(1, args.rounds + 1):
            for connections in args.connections:
                for config, service in services.items():
                    level = levels[config, connections]
                    level.rounds.append(run_wrk(args, service.url, plan, connections, args.duration))
                    level.db_connections = max(level.db_connections, database_connections(f"load-bench {config}"))
                print(f"  round {round_number}: {connections} connections done", file=sys.stderr, flush=True)
        memory = {config: resident_mb(service.process.pid) for config, service in services.items()}
        return list(levels.values()), memory
    finally:
        for service in services.values():
            service.stop()


# --- report -----------------------------------------------------------------------------


def print_report(levels: list[Level], memory: dict[ServerConfig, float], header: str) -> None:
    print(header)
    print("-" * len(header))
    print(
        f"{'gunicorn':<14} {'conns':>5} {'req/s':>6} {'(rounds)':>15} {'p50 ms':>7} {'p99 ms':>7} {'p99/p50':>7} "
        f"{'non-2xx':>7} {'sock err':>8} {'pg conns':>8}  responses per method"
    )
    for level in levels:
        spread = f"{min(level.rates):.0f}-{max(level.rates):.0f}"
        p50, p99 = level.latency_ms("p50_us"), level.latency_ms("p99_us")
        mix = " ".join(f"{name}={n}" for name, n in sorted(level.per_method().items()))
        print(
            f"{level.config!s:<14} {level.connections:>5} {level.rate:>6.0f} {spread:>15} {p50:>7.0f} {p99:>7.0f} "
            f"{p99 / p50:>7.1f} {sum(level.non_2xx.values()):>7} {sum(level.socket_errors.values()):>8} "
            f"{level.db_connections:>8}  {mix}"
        )
        for key, n in sorted(level.non_2xx.items()):
            print(f"{'':<14} {n:>12} × {key}")
        for kind, n in level.socket_errors.items():
            print(f"{'':<14} {n:>12} × {kind.replace('_', ' ')}")
    print()
    methods = sorted({name for level in levels for name in level.per_method()})
    print(f"{'p50 / p99 ms by method':<20} " + " ".join(f"{name:>14}" for name in methods))
    for level in levels:
        cells = " ".join(f"{p50:>6.0f} /{p99:>6.0f}" for p50, p99 in map(level.method_latency_ms, methods))
        print(f"{level.config!s:<14} {level.connections:>5} {cells}")
    print()
    print("gunicorn RSS after the run (master + workers): " + ", ".join(f"{c} {mb:.0f} MB" for c, mb in memory.items()))
    for connections in sorted({level.connections for level in levels}):
        ranked = sorted((lv for lv in levels if lv.connections == connections), key=lambda lv: -lv.rate)
        print(f"{connections:>3} connections, by req/s: " + ", ".join(f"{lv.config} {lv.rate:.0f}" for lv in ranked))


def main(argv=None) -> int:
    args = parse_args(argv)
    source = os.environ.get("DATABASE_URL", "")
    if not source.startswith(("postgres://", "postgresql://")):
        print("error: the benchmark is meant for PostgreSQL: set DATABASE_URL=postgres://...", file=sys.stderr)
        return 2
    if shutil.which(args.wrk) is None:
        print(f"error: {args.wrk!r} not found: apt-get install wrk", file=sys.stderr)
        return 2
    configure_environment(bench_database_url(source, args.database))
    import django

    django.setup()
    from django.db import connection

    prepare_database()
    prepare_namespace()
    bucket_id, seeding = prepare_bucket(args.uploads)
    keys = issue_keys()
    with connection.cursor() as cursor:
        cursor.execute("SELECT version()")
        server = cursor.fetchone()[0].split(" on ")[0]
        cursor.execute("SHOW max_connections")
        max_connections = cursor.fetchone()[0]
    with tempfile.TemporaryDirectory(prefix="load-bench-") as directory:
        plan = write_plan(Path(directory), workload(bucket_id), keys)
        try:
            levels, memory = measure(args, plan)
        except RuntimeError as error:  # gunicorn did not start, or wrk failed
            print(f"error: {error}", file=sys.stderr)
            return 2
    print_report(
        levels,
        memory,
        f"Mixed load (60% ListUploads, 20% GetNamespace, 10% ListJobs, 10% RunJob) — {server} "
        f"(max_connections {max_connections}), database {connection.settings_dict['NAME']}, bucket {seeding}, "
        f"wrk on the same machine, {args.rounds} rounds of {args.duration:g} s per level, "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs",
    )
    failed = [level for level in levels if level.errors]
    print(
        f"[{'FAIL' if failed else 'PASS'}] 0 errors at every level of every configuration"
        + (f" ({', '.join(f'{lv.config} at {lv.connections}: {lv.errors}' for lv in failed)})" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
