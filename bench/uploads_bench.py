"""ListUploads at a million uploads, through the full Django stack (see bench/UPLOADS.md).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/cp_uploads_bench \
        .venv/bin/python bench/uploads_bench.py [--reseed] [--count 1000000] [--runs 40]

--reseed drops the bench bucket, seeds it again with `manage.py seed_uploads` in a child
process and records its wall time and peak RSS (var/uploads_seed.json); without it the
last recorded seeding figures are reported.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import StatStatements, production_like_environment  # noqa: E402

production_like_environment(DATABASE_URL="postgres://postgres@127.0.0.1:5432/cp_uploads_bench", LOG_LEVEL="ERROR")

import django  # noqa: E402
import psycopg  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402
from google.protobuf import json_format  # noqa: E402

from apikeys.services import issue_api_key  # noqa: E402
from controlplane.auth import Principal, Role  # noqa: E402
from namespaces.models import Namespace  # noqa: E402
from namespaces.services import create_namespace  # noqa: E402
from uploads.api.v1 import uploads_pb2 as pb  # noqa: E402
from uploads.models import Bucket  # noqa: E402
from uploads.read import cursors, query  # noqa: E402
from uploads.services import create_bucket  # noqa: E402

NAMESPACE, BUCKET = "bench", "million"
URL = "/uploads.api.v1.BucketUploadsService/ListUploads"
SEED_FILE = ROOT / "var" / "uploads_seed.json"
SYSTEM = Principal.system("uploads-bench")
FIRST = "first page (createdAt desc)"
FLOOR = "floor: one raw SQL round trip (psycopg)"
# PostgreSQL plans a prepared statement's first 5 executions for their values (plan_cache_mode
# auto), then keeps a generic plan: warm-up rounds cover them, so the timed ones show the steady state.
WARMUP_ROUNDS = 6


def main() -> None:
    args = parse_args()
    if connection.vendor != "postgresql":
        print("the benchmark needs PostgreSQL (DATABASE_URL)", file=sys.stderr)
        sys.exit(2)
    if args.reseed:
        reseed(args.count)
    bucket = Bucket.objects.get(namespace__name=NAMESPACE, name=BUCKET)
    rows = bucket.uploads.count()
    print(f"bucket {bucket.pk}: {rows:,} uploads; {args.runs} runs per case after warm-up")
    _, key = issue_api_key(actor=SYSTEM, namespace=NAMESPACE, name="uploads bench", role=Role.VIEWER)
    client = Client(HTTP_HOST="localhost", HTTP_AUTHORIZATION=f"Bearer {key}")
    ref = {"bucketId": str(bucket.pk)}
    goals = []

    def call(body: dict) -> dict:
        response = client.post(URL, json.dumps(body), content_type="application/json")
        assert response.status_code == 200, response.content[:300]
        return response.json()

    deep_position = max(int(rows * 0.9), rows - 50_000)
    bodies = {
        FIRST: {},
        f"deep page by cursor (after row {deep_position:,})": {"cursor": deep_cursor(bucket, deep_position)},
    }
    for sort_by in query.SORT_FIELDS:
        for order in ("desc", "asc"):
            bodies[f"sortBy={sort_by} {order}"] = {"sortBy": sort_by, "sortOrder": order}
    bodies["tags + metadata + slug prefix"] = {
        "tags": ["finance"],
        "metadataFilters": [{"key": "status", "stringValue": "draft"}],
        "slug": "re",
    }
    bodies["path folder filter"] = {"path": "/projects/report"}
    cases = {name: partial(call, {"bucket": ref, "pageSize": 50, **body}) for name, body in bodies.items()}
    statements = StatStatements(connection)
    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as floor_connection:
        cases[FLOOR] = partial(floor_page, floor_connection, bucket)
        # Round robin: every case once per round, so the machine's swings (other processes)
        # fall on all cases alike and the ratios stay comparable. Each round in its own
        # order: in a fixed one, "first page" and "sortBy=created_at desc", the same request,
        # came out up to 18% apart (whatever ran just before each one weighed on it).
        samples = {name: [] for name in cases}
        order = list(cases)
        shuffle = random.Random(0).shuffle
        for round_number in range(WARMUP_ROUNDS + args.runs):
            if round_number == WARMUP_ROUNDS and statements.available:
                statements.reset()
            shuffle(order)
            for name in order:
                run = cases[name]
                started = time.perf_counter()
                run()
                if round_number >= WARMUP_ROUNDS:
                    samples[name].append((time.perf_counter() - started) * 1000)
        page_plans = statements.find("FROM uploads_upload") if statements.available else None
        bucket_plans = statements.find("FROM uploads_bucket b") if statements.available else None
    results = {name: statistics.median(s) for name, s in samples.items()}
    first, deep, floor = results[FIRST], results[list(bodies)[1]], results[FLOOR]

    print(f"\n{'case (pageSize 50)':<44} {'p50 ms':>8} {'p95 ms':>8} {'/ first':>8}")
    for name, values in samples.items():
        values.sort()
        p95 = values[int(len(values) * 0.95) - 1]
        print(f"{name:<44} {results[name]:8.1f} {p95:8.1f} {results[name] / first:7.2f}x")
    print(f"{'first page / floor':<44} {first / floor:17.2f}x")

    # Where the page's time goes besides the database: its rows to proto3 JSON objects
    # (rows_to_json), and those to bytes (the JSON codec's orjson).
    print(f"\n{'first page (50): encoder path, per page':<44} {'p50 µs':>8} {'/ page':>8}")
    encoder = encoder_path(lambda: cases[FIRST](), args.runs * 2)
    for name, micros in encoder.items():
        print(f"{name:<44} {micros:8.0f} {micros / 1000 / first:7.1%}")

    print("\nplanning, from pg_stat_statements (timed rounds only: after the warm-up)")
    if not statements.available:
        print(f"  not measured: {statements.reason}")
    for name, figures in (("page statement", page_plans), ("bucket statement", bucket_plans)):
        if statements.available:
            print(f"  {name}: {statements.describe(figures) if figures else 'not found'}")

    # BEGIN/COMMIT come from the Transaction interceptor (read-only methods lose them on the
    # fastpath branch); the statements ListUploads' own code issues are the rest.
    print(f"\n{'SQL statements per page':<44} {'all':>8} {'ours':>8}")
    counts = []
    for size in (10, 50, 1000):
        with CaptureQueriesContext(connection) as captured:
            page = call({"bucket": ref, "pageSize": size})
        assert len(page["uploads"]) == size
        ours = [q for q in captured.captured_queries if q["sql"] not in ("BEGIN", "COMMIT")]
        counts.append(len(ours))
        print(f"{'pageSize ' + str(size):<44} {len(captured):>8} {len(ours):>8}")

    worst = max((p50 / first, name) for name, p50 in results.items() if name not in (FIRST, FLOOR))
    goals.append(("first page p50 <= 2x the floor (issue 24)", first <= 2 * floor, f"{first / floor:.2f}x"))
    goals.append(("<= 3 statements per page, any page size", max(counts) <= 3, str(counts)))
    goals.append(("every case within 2x of the first page", worst[0] <= 2, f"worst {worst[0]:.2f}x: {worst[1]}"))
    goals.append(("deep page within 1.1x of the first page", deep <= 1.1 * first, f"{deep / first:.2f}x"))
    print()
    for name, ok, figure in goals:
        print(f"{'PASS' if ok else 'FAIL'}  {name:<44} {figure}")
    seed = json.loads(SEED_FILE.read_text()) if SEED_FILE.exists() else None
    if seed:  # the ingest benchmark's figure: reported here, not judged
        rate = seed["count"] / seed["seconds"]
        figures = f"{seed['count']:,} in {seed['seconds']:.0f} s ({rate:,.0f}/s), {seed['max_rss_mb']:.0f} MB"
        print(f"info  last seeding: {figures}")
    sys.exit(0 if all(ok for _, ok, _ in goals) else 1)


def encoder_path(call, count: int) -> dict[str, float]:
    """Median µs per call spent building the page's JSON objects and encoding them."""
    from controlplane.rpc.codecs import JsonCodec
    from uploads.read import listing

    spent = {"rows to JSON objects (rows_to_json.record)": [], "objects to bytes (JsonCodec.encode)": []}
    record, encode = listing.record, JsonCodec.encode
    per_call = {}

    def timed(function, name):
        def run(*args):
            started = time.perf_counter_ns()
            try:
                return function(*args)
            finally:
                per_call[name] = per_call.get(name, 0) + time.perf_counter_ns() - started

        return run

    names = list(spent)
    listing.record, JsonCodec.encode = timed(record, names[0]), timed(encode, names[1])
    try:
        for _ in range(count):
            per_call.clear()
            call()
            for name in names:
                spent[name].append(per_call.get(name, 0) / 1000)
    finally:
        listing.record, JsonCodec.encode = record, encode
    return {name: statistics.median(values) for name, values in spent.items()}


def deep_cursor(bucket: Bucket, position: int) -> str:
    """A cursor for the row at `position` of the default order, built with the server's own
    encoder (the same signing key, salt and filter binding), instead of walking 18,000 pages."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT created_at, upload_id FROM uploads_upload WHERE bucket_id = %s"
            " ORDER BY created_at DESC, upload_id DESC OFFSET %s LIMIT 1",
            [bucket.pk, position - 1],
        )
        created_at, upload_id = cursor.fetchone()
    request = json_format.ParseDict({"bucket": {"bucketId": str(bucket.pk)}, "pageSize": 50}, pb.ListUploadsRequest())
    parsed = query.parse(request)
    return cursors.encode(parsed, str(bucket.pk), value=created_at, upload_id=upload_id, anchor=timezone.now())


FLOOR_SQL = """
SELECT u.*,
  (SELECT json_agg(a ORDER BY a.position) FROM uploads_alias a WHERE a.upload_id = u.upload_id),
  (SELECT json_agg(m ORDER BY m.position) FROM uploads_metaupload m WHERE m.upload_id = u.upload_id),
  (SELECT row_to_json(i) FROM uploads_integration i
    WHERE i.namespace_id = %s AND i.integration_id = u.integration_id)
FROM (SELECT * FROM uploads_upload WHERE bucket_id = %s
      ORDER BY created_at DESC, upload_id DESC LIMIT 51) u
ORDER BY u.created_at DESC, u.upload_id DESC
"""


def floor_page(connection, bucket: Bucket) -> None:
    """The floor: the first page with its aliases, metaUploads and integration, in ONE round
    trip on a plain psycopg connection (no Django), rows fetched and their JSON decoded."""
    with connection.cursor() as cursor:
        cursor.execute(FLOOR_SQL, [bucket.namespace_id, bucket.pk])
        assert len(cursor.fetchall()) == 51


def reseed(count: int) -> None:
    old = Bucket.objects.filter(namespace__name=NAMESPACE, name=BUCKET).first()
    if old is not None:
        # Set-based deletes: the ORM's cascade would load a million rows into memory.
        with connection.cursor() as cursor:
            for table in ("uploads_alias", "uploads_metaupload"):
                cursor.execute(
                    f"DELETE FROM {table} WHERE upload_id IN"
                    " (SELECT upload_id FROM uploads_upload WHERE bucket_id = %s)",
                    [old.pk],
                )
            cursor.execute("DELETE FROM uploads_upload WHERE bucket_id = %s", [old.pk])
        old.delete()
    if not Namespace.objects.filter(name=NAMESPACE).exists():
        create_namespace(actor=SYSTEM, name=NAMESPACE)
    bucket = create_bucket(actor=SYSTEM, namespace=NAMESPACE, name=BUCKET)
    connection.close()
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "manage.py", "seed_uploads", "--bucket", str(bucket.pk), "--count", str(count), "--seed", "1"],
        cwd=ROOT,
        check=True,
    )
    seconds = time.monotonic() - started
    max_rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
    with connection.cursor() as cursor:
        # What autovacuum does soon after a bulk load, done now so the figures do not depend
        # on when it ran: statistics, and the visibility map that index-only scans need.
        cursor.execute("VACUUM (ANALYZE) uploads_upload, uploads_alias, uploads_metaupload")
    SEED_FILE.parent.mkdir(exist_ok=True)
    SEED_FILE.write_text(json.dumps({"count": count, "seconds": seconds, "max_rss_mb": max_rss_mb}))
    print(f"seeded {count:,} uploads in {seconds:.1f} s, peak RSS {max_rss_mb:.0f} MB")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reseed", action="store_true")
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=40)
    return parser.parse_args()


if __name__ == "__main__":
    main()
