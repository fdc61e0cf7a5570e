#!/usr/bin/env python
"""Ingest benchmark: `manage.py seed_uploads` and `manage.py import_uploads` against the
database's own speed (a raw COPY of the same rows), with peak memory (see bench/INGEST.md).

    DATABASE_URL=postgres://USER@127.0.0.1:5432/NAME .venv/bin/python bench/ingest_bench.py \\
        [--count 1000000] [--import-count 200000]

PostgreSQL only (exit 2 on anything else). Works in a throwaway database
`cp_ingest_bench_<NAME>` (Django's test-database machinery; dropped at the end). In order:

1. floor: the rows of `--count` synthetic records, pre-generated into COPY text in memory
   outside the timing, then COPYed with psycopg into the same tables (uploads, aliases,
   metaUploads), one transaction per 20,000 records as seed_uploads commits: the database
   side alone. The same for the `--import-count` records of the import file.
2. seed_uploads --count N in a child process, then again with N/2 (bounded memory: the
   peak RSS must not grow with the count); the tables are emptied between runs.
3. import_uploads of a JSON Lines file of `--import-count` records in the ListUploads
   shape (written by the benchmark before the timing), and of half of it.
4. what the indexes cost: the pre-generated upload rows COPYed into scratch copies of the
   uploads table with no index, the primary key only, and every index.

Each command runs in its own child; its peak RSS and CPU time are that child's rusage
(os.wait4). CPU µs per upload is the client's side of the work, steady whatever else runs
on the machine, unlike the rates.
Goals: ≥ 10,000 uploads/s for each command; peak RSS < RSS_LIMIT_MB and at most
RSS_GROWTH× between N/2 and N. Exit 0 when met, 1 when missed, 2 when it cannot run.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import production_like_environment, throwaway_database  # noqa: E402

GOAL_PER_SECOND = 10_000
RSS_LIMIT_MB = 300
RSS_GROWTH = 1.25  # peak RSS at N over N/2: flat, give or take allocator noise
SEED, IMPORT_SEED = 1, 2  # different seeds: uploadIds are unique platform-wide
FLOOR_BATCH = 20_000


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1_000_000, help="uploads seeded")
    parser.add_argument("--import-count", type=int, default=200_000, help="uploads in the import file")
    parser.add_argument("--index-count", type=int, default=100_000, help="rows for the index-cost table (0 skips)")
    args, ignored = parser.parse_known_args(argv)  # bench/run.py passes every benchmark the same arguments
    if ignored:
        print(f"ignoring arguments meant for other benchmarks: {' '.join(ignored)}", file=sys.stderr)
    return args


@dataclass
class Run:
    label: str
    count: int
    seconds: float
    rss_mb: float | None = None
    cpu_seconds: float | None = None  # the command's own CPU (user + system), start-up included

    @property
    def rate(self) -> float:
        return self.count / self.seconds if self.seconds else 0.0


# ---- the floor: pre-generated rows, raw COPY ----------------------------------------------------


def pregenerate(records, bucket_id) -> list[tuple[int, dict[str, bytearray]]]:
    """COPY text per table and batch, made by the same validation and the same row
    formatter (psycopg's, in C) as the commands use, before any timing."""
    from django.utils import timezone
    from psycopg._copy_base import format_row_text
    from psycopg.adapt import Transformer

    from uploads.write.json_to_rows import rows_from_json
    from uploads.write.writer import CHILDREN

    transformer = Transformer()
    now = timezone.now()
    batches, tables, size = [], None, 0
    for record in records:
        if tables is None:
            tables = {"upload": bytearray()} | {name: bytearray() for _, _, name in CHILDREN}
        rows = rows_from_json(record, bucket_id=bucket_id, now=now)
        format_row_text(rows.upload, transformer, tables["upload"])
        for _, _, name in CHILDREN:
            for row in getattr(rows, name):
                format_row_text(row, transformer, tables[name])
        size += 1
        if size == FLOOR_BATCH:
            batches.append((size, tables))
            tables, size = None, 0
    if size:
        batches.append((size, tables))
    return batches


def copy_floor(url: str, batches) -> float:
    """Seconds to COPY the pre-generated batches, one transaction each."""
    import psycopg

    from uploads.models import Upload
    from uploads.write.rows import UPLOAD_COLUMNS
    from uploads.write.writer import CHILDREN

    targets = [("upload", Upload, UPLOAD_COLUMNS)] + [(name, model, cols) for model, cols, name in CHILDREN]
    statements = {
        name: f"COPY {model._meta.db_table} ({', '.join(_column(model, c) for c in cols)}) FROM STDIN"
        for name, model, cols in targets
    }
    with psycopg.connect(url) as conn:
        started = time.perf_counter()
        for _, tables in batches:
            with conn.transaction():
                for name, _, _ in targets:
                    with conn.cursor().copy(statements[name]) as copy:
                        data = tables[name]
                        for i in range(0, len(data), 1 << 20):
                            copy.write(data[i : i + (1 << 20)])
        return time.perf_counter() - started


def _column(model, attname: str) -> str:
    return '"' + model._meta.get_field(attname).column + '"'


def index_costs(url: str, batches, limit: int) -> list[tuple[str, float]]:
    """Upload rows per second into scratch copies of the uploads table, by index set."""
    import psycopg

    data = b"".join(tables["upload"] for _, tables in batches)
    lines = data.split(b"\n")[:limit]
    data, count = b"\n".join(lines) + b"\n", len(lines)
    from uploads.models import Upload
    from uploads.write.rows import UPLOAD_COLUMNS

    columns = ", ".join(_column(Upload, c) for c in UPLOAD_COLUMNS)
    results = []
    with psycopg.connect(url, autocommit=True) as conn:
        indexes = conn.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'uploads_upload'")
        indexes = dict(indexes.fetchall())
        primary = [n for n in indexes if n.endswith("_pkey")]
        for label, names in (("no index", []), ("primary key only", primary), ("every index", list(indexes))):
            conn.execute("DROP TABLE IF EXISTS ingest_bench_scratch")
            conn.execute("CREATE TABLE ingest_bench_scratch (LIKE uploads_upload INCLUDING DEFAULTS)")
            for name in names:
                conn.execute(
                    indexes[name].replace(
                        f"INDEX {name} ON public.uploads_upload", f"INDEX s_{name} ON ingest_bench_scratch"
                    )
                )
            started = time.perf_counter()
            with conn.transaction(), conn.cursor().copy(f"COPY ingest_bench_scratch ({columns}) FROM STDIN") as copy:
                for i in range(0, len(data), 1 << 20):
                    copy.write(data[i : i + (1 << 20)])
            results.append((f"{label} ({len(names)})", count / (time.perf_counter() - started)))
        conn.execute("DROP TABLE ingest_bench_scratch")
    return results


# ---- the commands, each in its own child ---------------------------------------------------------


# A fresh, small interpreter starts each command and reports its rusage: a process forked
# straight from this one would count this process's memory (the floor's rows) in its peak.
LAUNCHER = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[1:])
_, status, usage = os.wait4(child.pid, 0)
print(usage.ru_maxrss, usage.ru_utime + usage.ru_stime, file=sys.stderr)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_command(url: str, label: str, count: int, *args: str) -> Run:
    env = {**os.environ, "DATABASE_URL": url}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", LAUNCHER, sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{label} failed: {done.stdout}{done.stderr[-2000:]}")
    peak_kib, cpu = done.stderr.strip().rsplit("\n", 1)[-1].split()  # ru_maxrss: KiB on Linux
    return Run(label, count, seconds, int(peak_kib) / 1024, float(cpu))


def empty_tables(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("TRUNCATE uploads_upload, uploads_alias, uploads_metaupload, uploads_bucketmetadatakey")
        conn.execute("CHECKPOINT")  # each run starts from the same clean state


# ---- report ----------------------------------------------------------------------------------------


def main(argv=None) -> int:
    args = parse_args(argv)
    production_like_environment()
    import django

    django.setup()
    from django.db import connection

    if connection.vendor != "postgresql":
        print(
            f"error: the ingest benchmark needs PostgreSQL (DATABASE_URL); this is {connection.vendor}", file=sys.stderr
        )
        return 2
    with throwaway_database("cp_ingest_bench", allow_sqlite=False) as bench_name:
        url = urlunsplit(urlsplit(os.environ["DATABASE_URL"])._replace(path="/" + bench_name))
        return measure(args, url, connection)


def measure(args, url: str, connection) -> int:
    import orjson

    from controlplane.auth import Principal
    from namespaces.services import create_namespace
    from uploads.services import create_bucket
    from uploads.write import synthetic

    system = Principal.system("ingest-bench")
    create_namespace(actor=system, name="bench")
    seed_bucket = create_bucket(actor=system, namespace="bench", name="seed")
    import_bucket = create_bucket(actor=system, namespace="bench", name="import")
    with connection.cursor() as cursor:
        cursor.execute("SELECT version()")
        server = cursor.fetchone()[0].split(" on ")[0]
    connection.close()  # the children and the floor use their own connections
    print(
        f"Ingest benchmark — {server}, throwaway database {url.rsplit('/', 1)[1]}, "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs",
        flush=True,
    )
    import_count = args.import_count
    with tempfile.TemporaryDirectory(prefix="ingest_bench_") as tmp:
        file = Path(tmp) / "uploads.jsonl"
        half_file = Path(tmp) / "half.jsonl"
        with file.open("wb") as full, half_file.open("wb") as half:
            for n, record in enumerate(synthetic.records(import_count, IMPORT_SEED)):
                line = orjson.dumps(record) + b"\n"
                full.write(line)
                if n < import_count // 2:
                    half.write(line)

        runs: list[tuple[Run, Run]] = []
        print("pre-generating the floor's rows…", flush=True)
        batches = pregenerate(synthetic.records(args.count, SEED), seed_bucket.pk)
        empty_tables(url)
        floor = Run("raw COPY", args.count, copy_floor(url, batches))
        costs = index_costs(url, batches, args.index_count) if args.index_count else []
        del batches
        empty_tables(url)
        seed = run_command(url, "seed_uploads", args.count, *_seed_args(seed_bucket, args.count))
        empty_tables(url)
        seed_half = run_command(url, "seed_uploads", args.count // 2, *_seed_args(seed_bucket, args.count // 2))
        runs.append((seed, seed_half))

        batches = pregenerate(synthetic.records(import_count, IMPORT_SEED), import_bucket.pk)
        empty_tables(url)
        import_floor = Run("raw COPY", import_count, copy_floor(url, batches))
        del batches
        empty_tables(url)
        imported = run_command(url, "import_uploads", import_count, *_import_args(import_bucket, file))
        empty_tables(url)
        imported_half = run_command(url, "import_uploads", import_count // 2, *_import_args(import_bucket, half_file))
        runs.append((imported, imported_half))
    return report(runs, (floor, import_floor), costs)


def _seed_args(bucket, count: int) -> list[str]:
    return ["seed_uploads", "--bucket", str(bucket.pk), "--count", str(count), "--seed", str(SEED)]


def _import_args(bucket, file: Path) -> list[str]:
    return ["import_uploads", "--bucket", str(bucket.pk), str(file)]


def report(runs, floors, costs) -> int:
    print()
    print(
        f"{'':16} {'uploads':>10} {'wall s':>8} {'uploads/s':>10} {'peak RSS MB':>12} {'CPU µs/upload':>14}"
        f" {'floor/s':>9} {'÷ floor':>8}"
    )
    for (full, half), floor in zip(runs, floors, strict=True):
        for run in (full, half):
            print(
                f"{run.label:16} {run.count:>10,} {run.seconds:>8.1f} {run.rate:>10,.0f} {run.rss_mb:>12.0f}"
                f" {run.cpu_seconds / run.count * 1e6:>14.0f} {floor.rate:>9,.0f} {run.rate / floor.rate:>8.2f}"
            )
        print(f"{'  raw COPY floor':16} {floor.count:>10,} {floor.seconds:>8.1f} {floor.rate:>10,.0f}")
    if costs:
        print("\nupload rows/s by index set (scratch copy of uploads_upload, raw COPY):")
        for label, rate in costs:
            print(f"  {label:24} {rate:>10,.0f}")
    print()
    passed = True
    for full, half in runs:
        passed &= goal(full.rate >= GOAL_PER_SECOND, f"{full.label} ≥ {GOAL_PER_SECOND:,}/s ({full.rate:,.0f}/s)")
        passed &= goal(full.rss_mb < RSS_LIMIT_MB, f"{full.label} peak RSS < {RSS_LIMIT_MB} MB ({full.rss_mb:.0f} MB)")
        growth = full.rss_mb / half.rss_mb
        passed &= goal(
            growth <= RSS_GROWTH,
            f"{full.label} peak RSS flat: ×{growth:.2f} from {half.count:,} to {full.count:,} (≤ ×{RSS_GROWTH})",
        )
    return 0 if passed else 1


def goal(ok: bool, text: str) -> bool:
    print(f"[{'PASS' if ok else 'FAIL'}] {text}")
    return ok


if __name__ == "__main__":
    sys.exit(main())
