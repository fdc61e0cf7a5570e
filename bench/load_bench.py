#!/usr/bin/env python
"""Throughput benchmark: a mixed Connect workload against a real gunicorn, driven by wrk.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/controlplane .venv/bin/python bench/load_bench.py \\
        [--uploads 1000000] [--duration 10] [--connections 1,4,16,64] [--configs sync:5,gthread:2x4]

Runs on PostgreSQL only, in a database kept beside DATABASE_URL's (`cp_load_<name>`, created and
migrated when missing), so that a seeded bucket is reused by the next run: seeding a million
uploads takes minutes. For each gunicorn configuration (deploy/gunicorn.conf.py with the worker
class, workers and threads overridden, bound to 127.0.0.1) and each connection count, wrk sends
60% ListUploads (first page of 50), 20% GetNamespace, 10% ListJobs, 10% RunJob (a fresh requestId
each), each with the least key that may call it (bench/load/mixed.lua), and this prints req/s,
p50/p99 and every error: non-2xx statuses per method, and wrk's connect/read/write/timeout errors.

Goal: 0 errors at every level of every configuration. Exit status: 0 met, 1 missed, 2 cannot run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

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
    """The mix of issue 9 (60/20/10/10). `{requestId}` is replaced per call by mixed.lua."""
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
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of load per level")
    parser.add_argument(
        "--connections", default="1,4,16,64", type=lambda s: [int(n) for n in s.split(",")], help="levels"
    )
    parser.add_argument(
        "--configs",
        default="sync:2,sync:5,gthread:2x4,gthread:3x3",
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
    """Production-like settings (DEBUG off, the psycopg pool on); gunicorn inherits them."""
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")
    os.environ.setdefault("DEBUG", "false")
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-" + secrets.token_urlsafe(32))
    os.environ.setdefault("ALLOWED_HOSTS", "127.0.0.1,localhost")
    os.environ.setdefault("SECURE_SSL_REDIRECT", "false")
    os.environ.setdefault("SECURE_HSTS_SECONDS", "0")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.setdefault("DATABASE_POOL", "true")


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
    plan = directory / "plan.tsv"
    plan.write_text("".join(method.plan_line(keys[method.role]) + "\n" for method in methods))
    plan.chmod(0o600)  # bearer tokens
    return plan


# --- load -------------------------------------------------------------------------------


@dataclass
class Level:
    config: ServerConfig
    connections: int
    result: dict
    db_connections: int

    @property
    def seconds(self) -> float:
        return self.result["duration_us"] / 1e6

    @property
    def rate(self) -> float:
        return self.result["requests"] / self.seconds

    @property
    def non_2xx(self) -> dict[str, int]:
        return {key: n for key, n in self.result["statuses"].items() if not key.split()[-1].startswith("2")}

    @property
    def socket_errors(self) -> dict[str, int]:
        kinds = ("connect_errors", "read_errors", "write_errors", "timeouts")
        return {kind: self.result[kind] for kind in kinds if self.result[kind]}

    @property
    def errors(self) -> int:
        return sum(self.non_2xx.values()) + sum(self.socket_errors.values())

    def per_method(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for key, n in self.result["statuses"].items():
            method = key.split()[0]
            totals[method] = totals.get(method, 0) + n
        return totals


def run_wrk(args, url: str, plan: Path, connections: int, duration: float) -> dict:
    env = {**os.environ, "LOAD_PLAN": str(plan), "LOAD_RUN": secrets.token_hex(6)}
    command = wrk_command(url, connections, duration, args.wrk)
    finished = subprocess.run(command, env=env, capture_output=True, text=True, timeout=duration + 60, check=False)
    line = next((line for line in finished.stdout.splitlines() if line.startswith("LOAD-RESULT ")), None)
    if finished.returncode != 0 or line is None:
        raise RuntimeError(f"wrk failed ({finished.returncode}): {finished.stderr.strip() or finished.stdout[-500:]}")
    return json.loads(line.removeprefix("LOAD-RESULT "))


def database_connections() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def measure(args, config: ServerConfig, plan: Path) -> list[Level]:
    from tests.live import ServiceProcess

    service = ServiceProcess(workers=config.workers, args=config.gunicorn_args(), env={"DATABASE_POOL": "true"})
    service.start()
    try:
        # Every worker imports its first views and opens its pool before the first level.
        run_wrk(args, service.url, plan, max(args.connections), min(args.duration, 3))
        levels = []
        for connections in args.connections:
            result = run_wrk(args, service.url, plan, connections, args.duration)
            levels.append(Level(config, connections, result, database_connections()))
            print(f"  {config}: {connections} connections done", file=sys.stderr, flush=True)
        return levels
    finally:
        service.stop()


# --- report -----------------------------------------------------------------------------


def print_report(levels: list[Level], header: str) -> None:
    print(header)
    print("-" * len(header))
    print(
        f"{'gunicorn':<14} {'conns':>5} {'req/s':>7} {'p50 ms':>8} {'p99 ms':>8} "
        f"{'non-2xx':>8} {'sock err':>8} {'pg conns':>8}  mix (responses per method)"
    )
    for level in levels:
        mix = " ".join(f"{name}={n}" for name, n in sorted(level.per_method().items()))
        print(
            f"{level.config!s:<14} {level.connections:>5} {level.rate:>7.0f} {level.result['p50_us'] / 1000:>8.1f} "
            f"{level.result['p99_us'] / 1000:>8.1f} {sum(level.non_2xx.values()):>8} "
            f"{sum(level.socket_errors.values()):>8} {level.db_connections:>8}  {mix}"
        )
        for key, n in sorted(level.non_2xx.items()):
            print(f"{'':<14} {'':>5} {n:>7} × {key}")
        for kind, n in level.socket_errors.items():
            print(f"{'':<14} {'':>5} {n:>7} × {kind.replace('_', ' ')}")
    print()
    best = max(levels, key=lambda level: (level.connections, level.rate) if not level.errors else (0, 0))
    print(f"highest req/s at {best.connections} connections without errors: {best.config} ({best.rate:.0f} req/s)")


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
    levels: list[Level] = []
    with tempfile.TemporaryDirectory(prefix="load-bench-") as directory:
        plan = write_plan(Path(directory), workload(bucket_id), keys)
        try:
            for config in args.configs:
                levels.extend(measure(args, config, plan))
        except RuntimeError as error:  # gunicorn did not start, or wrk failed
            print(f"error: {error}", file=sys.stderr)
            return 2
    print_report(
        levels,
        f"Mixed load (60% ListUploads, 20% GetNamespace, 10% ListJobs, 10% RunJob) — {server} "
        f"(max_connections {max_connections}), database {connection.settings_dict['NAME']}, bucket {seeding}, "
        f"wrk on the same machine, {args.duration:g} s per level, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs",
    )
    failed = [level for level in levels if level.errors]
    print(
        f"[{'FAIL' if failed else 'PASS'}] 0 errors at every level of every configuration"
        + (f" ({', '.join(f'{lv.config} at {lv.connections}: {lv.errors}' for lv in failed)})" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
