"""bench/floor_bench.py runs end to end on PostgreSQL (tiny numbers) and refuses SQLite."""

import os
import re
import subprocess
import sys

from django.db import connection

from tests.conftest import ROOT


def run_bench(database_url: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / "floor_bench.py"), *args],
        cwd=ROOT, env={**os.environ, "DATABASE_URL": database_url}, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def test_floor_bench_compares_the_cheap_rpcs_with_healthz_and_counts_planning(tmp_path):
    if connection.vendor != "postgresql":
        result = run_bench(f"sqlite:///{tmp_path / 'source.sqlite3'}")
        assert result.returncode == 2
        assert "the benchmark needs PostgreSQL" in result.stderr
        return
    result = run_bench(os.environ["DATABASE_URL"], "--calls", "20", "--warmup", "100", "--filler-keys", "10")
    assert result.returncode in (0, 1), result.stderr[-3000:]
    out = result.stdout
    for section in ("in-process", "gunicorn sync, a new connection per call", "gunicorn gthread, keep-alive",
                    "before: never prepared (DATABASE_PREPARE_THRESHOLD=off)"):  # fmt: skip
        assert section in out, out
    assert len(re.findall(r"^  GetNamespace +\d+ +\d+ +\d+\.\d\d×$", out, re.MULTILINE)) == 4, out
    assert len(re.findall(r"^  GetJob +\d+ +\d+ +\d+\.\d\d×$", out, re.MULTILINE)) == 4, out
    assert len(re.findall(r"^  ListJobs +\d+ +\d+ +\d+\.\d\d×$", out, re.MULTILINE)) == 4, out
    assert "ListJobs p50" not in out  # shown, not judged
    assert re.search(r"\[(PASS|FAIL)\] GetNamespace p50 ≤ 2.0× /healthz's, gunicorn sync", out), out
    assert re.search(r"\[(PASS|FAIL)\] GetJob p50 ≤ 1.6× /healthz's, gunicorn gthread, keep-alive", out), out
    plans = re.findall(r"^  (GetNamespace|GetJob|ListJobs) statement: (\d+) calls, (\d+) plans", out, re.MULTILINE)
    if "planning: not measured" in out:
        assert "shared_preload_libraries" in out or "track_planning" in out or "CREATE EXTENSION" in out, out
        return
    assert len(plans) == 9, out  # the three RPCs in each of the three gunicorn runs
    prepared_runs, before = plans[:6], plans[6:]
    assert all(calls == "20" for _, calls, _ in plans), plans
    # Warm connections plan nothing once prepared (at most one connection the pool opened after
    # the warm-up: PostgreSQL's 5 custom plans and the generic one); never prepared, every call.
    assert all(int(planned) <= 6 for _, _, planned in prepared_runs), plans
    assert sum(int(planned) for _, _, planned in prepared_runs) <= 6, plans
    assert all(planned == "20" for _, _, planned in before), plans
