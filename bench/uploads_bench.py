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
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/cp_uploads_bench")
os.environ.setdefault("LOG_LEVEL", "ERROR")

import django  # noqa: E402

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
from uploads import cursors, query  # noqa: E402
from uploads.api.v1 import uploads_pb2 as pb  # noqa: E402
from uploads.models import Bucket  # noqa: E402
from uploads.services import create_bucket  # noqa: E402

NAMESPACE, BUCKET = "bench", "million"
URL = "/uploads.api.v1.BucketUploadsService/ListUploads"
SEED_FILE = ROOT / "var" / "uploads_seed.json"
SYSTEM = Principal.system("uploads-bench")


def main() -> None:
    args = parse_args()
    if connection.vendor != "postgresql":
        sys.exit("the benchmark needs PostgreSQL (DATABASE_URL)")
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

    def timed(body: dict) -> tuple[float, float]:
        for _ in range(3):
            call(body)
        samples = []
        for _ in range(args.runs):
            started = time.perf_counter()
            call(body)
            samples.append((time.perf_counter() - started) * 1000)
        samples.sort()
        return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]

    print(f"\n{'case (pageSize 50)':<44} {'p50 ms':>8} {'p95 ms':>8}")
    results = {}

    def case(name: str, body: dict) -> float:
        p50, p95 = timed({"bucket": ref, "pageSize": 50, **body})
        results[name] = p50
        print(f"{name:<44} {p50:8.1f} {p95:8.1f}")
        return p50

    first = case("first page (createdAt desc)", {})
    deep_position = max(int(rows * 0.9), rows - 50_000)
    deep = case(f"deep page by cursor (after row {deep_position:,})", {"cursor": deep_cursor(bucket, deep_position)})
    for sort_by in query.SORT_FIELDS:
        for order in ("desc", "asc"):
            case(f"sortBy={sort_by} {order}", {"sortBy": sort_by, "sortOrder": order})
    combined = {
        "tags": ["finance"],
        "metadataFilters": [{"key": "status", "stringValue": "draft"}],
        "slug": "re",
    }
    case("tags + metadata + slug prefix", combined)
    case("path folder filter", {"path": "/projects/report"})

    print(f"\n{'SQL queries per page':<44} {'count':>8}")
    counts = []
    for size in (10, 50, 1000):
        with CaptureQueriesContext(connection) as captured:
            page = call({"bucket": ref, "pageSize": size})
        assert len(page["uploads"]) == size
        counts.append(len(captured))
        print(f"{'pageSize ' + str(size):<44} {len(captured):>8}")

    raw = raw_page_ms(bucket, args.runs)
    print(f"\n{'raw SQL, same page rows (p50 ms)':<44} {raw:8.2f}")
    print(f"{'endpoint / raw SQL (first page p50)':<44} {first / raw:8.1f}x")

    seed = json.loads(SEED_FILE.read_text()) if SEED_FILE.exists() else None
    goals.append(("deep page within 1.3x of the first page", deep <= 1.3 * first, f"{deep / first:.2f}x"))
    goals.append(("first page p50 <= 30 ms", first <= 30, f"{first:.1f} ms"))
    goals.append(("query count constant over page sizes", len(set(counts)) == 1, str(counts)))
    if seed:
        note = f"{seed['count']:,} in {seed['seconds']:.0f} s"
        goals.append(("seeding 1M uploads < 5 min", seed["count"] >= 1_000_000 and seed["seconds"] < 300, note))
        goals.append(("seeding peak RSS < 500 MB", seed["max_rss_mb"] < 500, f"{seed['max_rss_mb']:.0f} MB"))
    else:
        goals.append(("seeding (run with --reseed to measure)", False, "not measured"))
    print()
    for name, ok, figure in goals:
        print(f"{'PASS' if ok else 'FAIL'}  {name:<44} {figure}")


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


def raw_page_ms(bucket: Bucket, runs: int) -> float:
    sql = "SELECT * FROM uploads_upload WHERE bucket_id = %s ORDER BY created_at DESC, upload_id DESC LIMIT 51"
    samples = []
    with connection.cursor() as cursor:
        for _ in range(runs + 3):
            started = time.perf_counter()
            cursor.execute(sql, [bucket.pk])
            cursor.fetchall()
            samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples[3:])


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
        cursor.execute("ANALYZE uploads_upload")
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
