#!/usr/bin/env python
"""Ours against the usual Django answer: GetNamespace and the first page of
ListUploads, each beside the same read written with Django REST framework (bench/peer/).

    .venv/bin/pip install -r bench/requirements.txt      # the peer's bench-only dependencies
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/cp_uploads_bench \\
        .venv/bin/python bench/peer_bench.py [--count 1000000] [--runs 200]

PostgreSQL only. The database is bench/uploads_bench.py's (DATABASE_URL, by default
cp_uploads_bench): its bucket bench/million is seeded with `manage.py seed_uploads` if it is
missing or empty. The peer's tables are migrated into it; the namespace gets a few bindings,
targets and a pull secret if it has none. Both sides are called in-process through the same
WSGI application (every middleware), alternating request by request so that both see the same
load; both answers are checked to hold the same records before anything is timed.

Exit status: 0 when ours is ahead (lower p50) on both cases, 1 when not, 2 when it cannot run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import connect_caller, percentile, production_like_environment, wsgi_caller  # noqa: E402

NAMESPACE, BUCKET = "bench", "million"
GET_NAMESPACE = "/containers.api.v1.NamespaceService/GetNamespace"
LIST_UPLOADS = "/uploads.api.v1.BucketUploadsService/ListUploads"
PAGE_SIZE = 50


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1_000_000, help="uploads to seed if the bucket is empty")
    parser.add_argument("--runs", type=int, default=200, help="timed requests per side and case")
    parser.add_argument("--warmup", type=int, default=30, help="untimed requests per side and case first")
    return parser.parse_args(argv)


def configure_environment() -> None:
    """The peer's settings (the product's plus DRF), production-like."""
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.peer.settings"
    production_like_environment(DATABASE_URL="postgres://postgres@127.0.0.1:5432/cp_uploads_bench")


def cannot_run() -> str | None:
    """Why the benchmark cannot run here, checked before Django loads the peer's apps."""
    from django.conf import settings

    engine = settings.DATABASES["default"]["ENGINE"]
    if "postgresql" not in engine:
        return f"the benchmark is meant for PostgreSQL (DATABASE_URL); this is {engine}"
    missing = [name for name in ("rest_framework", "rest_framework_api_key") if importlib.util.find_spec(name) is None]
    if missing:
        return f"{', '.join(missing)} not installed: .venv/bin/pip install -r bench/requirements.txt"
    return None


# --- data -------------------------------------------------------------------------------


def prepare(count: int) -> dict:
    """The database, its data and the keys of both sides; returns what the callers need."""
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from rest_framework_api_key.models import APIKey

    from apikeys.services import issue_api_key
    from controlplane.auth import Principal, Role
    from controlplane.dbsetup import ensure_database
    from uploads.models import Bucket
    from uploads.services import create_bucket

    ensure_database(settings.DATABASES["default"])
    call_command("migrate", verbosity=0)  # the product's tables and the peer's (rest_framework_api_key)
    actor = Principal.system("peer-bench")
    ensure_namespace(actor)
    bucket = Bucket.objects.filter(namespace__name=NAMESPACE, name=BUCKET).first()
    if bucket is None:
        bucket = create_bucket(actor=actor, namespace=NAMESPACE, name=BUCKET)
    if not bucket.uploads.exists():
        print(f"seeding {count:,} uploads into {NAMESPACE}/{BUCKET} (manage.py seed_uploads) …", flush=True)
        connection.close()
        seed = ["seed_uploads", "--bucket", str(bucket.pk), "--count", str(count), "--seed", "1"]
        subprocess.run(
            [sys.executable, "manage.py", *seed],
            cwd=ROOT,
            env={**os.environ, "DJANGO_SETTINGS_MODULE": "controlplane.settings"},
            check=True,
        )
    admin_key, admin = issue_api_key(actor=actor, namespace=NAMESPACE, name="peer bench admin", role=Role.ADMIN)
    viewer_key, viewer = issue_api_key(actor=actor, namespace=NAMESPACE, name="peer bench viewer", role=Role.VIEWER)
    # The library's keys have no role or scope: the key's name is the namespace it may read.
    drf_key, drf = APIKey.objects.create_key(name=NAMESPACE)
    return {
        "bucket": bucket,
        "admin": admin,
        "viewer": viewer,
        "drf": drf,
        "cleanup": (actor, [admin_key.key_id, viewer_key.key_id], drf_key),
    }


def ensure_namespace(actor) -> None:
    """The namespace with children, so that GetNamespace does its real work on both sides."""
    from controlplane.auth import Role
    from namespaces.models import GroupBinding, Namespace
    from namespaces.services import Binding, PullSecret, Target, create_namespace, update_namespace

    if not Namespace.objects.filter(name=NAMESPACE).exists():
        create_namespace(actor=actor, name=NAMESPACE)
    if GroupBinding.objects.filter(namespace__name=NAMESPACE).exists():
        return
    update_namespace(
        actor=actor,
        name=NAMESPACE,
        groups=[Binding("bench-admins", Role.ADMIN), Binding("bench-devs", Role.OPERATOR)],
        internal_targets=[Target("db", "db.internal", (5432,)), Target("cache", "cache.internal", (6379,))],
        image_pull_secrets=[PullSecret("ghcr.io", "vault://kv/bench/ghcr")],
        quotas={"max_sandboxes": 10, "max_running_jobs": 5},
    )


def cleanup(actor, key_ids: list[str], drf_key) -> None:
    from apikeys.services import revoke_api_key

    for key_id in key_ids:
        revoke_api_key(actor=actor, key_id=key_id)
    drf_key.delete()


# --- calls ------------------------------------------------------------------------------


def drf_caller(path: str, key: str):
    return wsgi_caller("GET", path, {"HTTP_ACCEPT": "application/json", "HTTP_AUTHORIZATION": f"Api-Key {key}"})


def answer(call) -> dict:
    status, body = call()
    if not status.startswith("200"):
        raise SystemExit(f"request failed: {status} {body[:300]!r}")
    return json.loads(body)


# --- same records -----------------------------------------------------------------------


def canonical(value):
    """A JSON value with the differences that are only encoding taken out: proto3 JSON omits
    defaults (DRF sends "", 0, false, [], null and *_UNSPECIFIED), writes int64 as strings
    and timestamps with 0/3/6/9 fractional digits."""
    if isinstance(value, dict):
        items = {key: canonical(item) for key, item in value.items()}
        return {key: item for key, item in items.items() if item not in (None, "", [], {})}
    if isinstance(value, list):
        return [canonical(item) for item in value]
    if isinstance(value, bool):
        return value or None
    if isinstance(value, int | float):
        return None if value == 0 else repr(int(value)) if float(value).is_integer() else repr(float(value))
    if isinstance(value, str):
        if value.endswith("_UNSPECIFIED"):
            return None
        if len(value) >= 20 and value[4] == "-" and value[10] == "T" and value.endswith("Z"):
            try:
                return datetime.fromisoformat(value).isoformat()
            except ValueError:
                return value
        return value or None
    return value


def check_same(ours: dict, drf: dict) -> None:
    """Exit 2 unless both answers hold the same namespace / the same records in the same order."""
    if canonical(ours["namespace"]) != canonical(drf["namespace"]):
        raise SystemExit(f"GetNamespace answers differ:\n ours {ours['namespace']}\n DRF  {drf['namespace']}")
    ours_ids = [u["uploadId"] for u in ours["uploads"]["uploads"]]
    drf_ids = [u["uploadId"] for u in drf["uploads"]["results"]]
    if ours_ids != drf_ids or len(ours_ids) != PAGE_SIZE:
        raise SystemExit(f"the first pages differ: ours {ours_ids[:3]}… ({len(ours_ids)}), DRF {drf_ids[:3]}…")
    for mine, theirs in zip(ours["uploads"]["uploads"], drf["uploads"]["results"], strict=True):
        if canonical(mine) != canonical(theirs):
            raise SystemExit(f"upload {mine['uploadId']} differs:\n ours {mine}\n DRF  {theirs}")


# --- measurements -----------------------------------------------------------------------


def queries_of(call) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    connection.queries_log.clear()  # the request resets the log: count from an empty one
    with CaptureQueriesContext(connection) as captured:
        call()
    return len(captured)


def measure(ours, drf, runs: int, warmup: int) -> dict:
    """Both sides alternately (which goes first alternates too), so both see the same load."""
    for _ in range(warmup):
        ours()
        drf()
    samples = {"ours": [], "drf": []}
    for i in range(runs):
        order = (("ours", ours), ("drf", drf)) if i % 2 == 0 else (("drf", drf), ("ours", ours))
        for side, call in order:
            started = time.perf_counter_ns()
            call()
            samples[side].append((time.perf_counter_ns() - started) / 1e6)
    figures = {side: (statistics.median(s), percentile(s, 0.95)) for side, s in samples.items()}
    figures["queries"] = (queries_of(ours), queries_of(drf))
    figures["bytes"] = (len(ours()[1]), len(drf()[1]))
    return figures


def print_table(results: dict[str, dict]) -> None:
    header = f"{'case':<28} {'ours p50/p95 ms':>16} {'DRF p50/p95 ms':>16} {'ours/DRF p50 (p95)':>19}"
    header += f" {'queries ours/DRF':>17} {'JSON bytes ours/DRF':>20}"
    print(header)
    print("-" * len(header))
    for case, f in results.items():
        (o50, o95), (d50, d95) = f["ours"], f["drf"]
        print(
            f"{case:<28} {f'{o50:.2f} / {o95:.2f}':>16} {f'{d50:.2f} / {d95:.2f}':>16}"
            f" {f'{o50 / d50:.2f}× ({o95 / d95:.2f}×)':>19} {'{} / {}'.format(*f['queries']):>17}"
            f" {'{:,} / {:,}'.format(*f['bytes']):>20}"
        )


# --- main -------------------------------------------------------------------------------


def main(argv=None) -> int:
    args = parse_args(argv)
    configure_environment()
    reason = cannot_run()
    if reason:
        print(f"error: {reason}", file=sys.stderr)
        return 2
    import django

    django.setup()
    from django.db import connection
    from rest_framework import VERSION as DRF_VERSION

    data = prepare(args.count)
    try:
        bucket = data["bucket"]
        cases = {
            "GetNamespace": (
                connect_caller(GET_NAMESPACE, data["admin"], {"namespace": NAMESPACE}),
                drf_caller(f"/peer/namespaces/{NAMESPACE}/", data["drf"]),
            ),
            f"ListUploads first page ({PAGE_SIZE})": (
                connect_caller(LIST_UPLOADS, data["viewer"], {"bucket": {"bucketId": str(bucket.pk)}, "pageSize": 50}),
                drf_caller(f"/peer/buckets/{bucket.pk}/uploads/", data["drf"]),
            ),
        }
        (ns_ours, ns_drf), (up_ours, up_drf) = cases.values()
        check_same(
            {"namespace": answer(ns_ours), "uploads": answer(up_ours)},
            {"namespace": answer(ns_drf), "uploads": answer(up_drf)},
        )
        rows = bucket.uploads.count()
        with connection.cursor() as cursor:
            cursor.execute("SELECT version()")
            server = cursor.fetchone()[0].split(" on ")[0]
        results = {case: measure(ours, drf, args.runs, args.warmup) for case, (ours, drf) in cases.items()}
    finally:
        cleanup(*data["cleanup"])

    print(
        f"Ours vs DRF {DRF_VERSION} — {server}, database {connection.settings_dict['NAME']}, {rows:,} uploads"
        f" in {NAMESPACE}/{BUCKET}; Python {platform.python_version()}, {os.cpu_count()} CPUs;"
        f" in-process WSGI, {args.runs} runs per side after {args.warmup} warm-up, alternating"
    )
    print("same answers: namespace content equal; first page: same 50 upload ids in the same order, records equal\n")
    print_table(results)
    print()
    passed = True
    for case, f in results.items():
        ahead = f["ours"][0] < f["drf"][0]
        passed &= ahead
        print(f"[{'PASS' if ahead else 'FAIL'}] {case}: ours ahead of DRF at p50 ({f['ours'][0] / f['drf'][0]:.2f}×)")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
