"""bench/watch_bench.py runs end to end (on SQLite here, with tiny numbers: its latency goal
is PostgreSQL's, so only the other figures are checked) and refuses SQLite by default."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import ROOT


def run_bench(tmp_path, *args):
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'source.sqlite3'}"}
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / "watch_bench.py"), *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip


def test_refuses_sqlite_by_default(tmp_path):
    result = run_bench(tmp_path)
    assert result.returncode == 2 and "PostgreSQL" in result.stderr


def test_prints_latency_memory_and_goals(tmp_path):
    result = run_bench(tmp_path, "--allow-sqlite", "--watches", "3", "--changes", "2", "--interval", "0.1")
    assert result.returncode in (0, 1), result.stderr  # 1: SQLite polls, so the latency goal may fail
    for row in ("latency p50 / p95 / max", "memory per open stream", "streams per worker in 512 MB"):
        assert row in result.stdout, result.stdout
    assert "[PASS] every stream got every change (0 missing)" in result.stdout
    assert not (tmp_path / "cp_bench_watch.sqlite3").exists()  # the throwaway database is dropped
