"""bench/runner_bench.py runs end to end (on SQLite here, with tiny numbers, real podman and runners) and
refuses SQLite by default."""

import os
import subprocess
import sys

from tests.conftest import ROOT


def run_bench(tmp_path, *args):
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'source.sqlite3'}"}
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / "runner_bench.py"), *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_runner_bench_refuses_sqlite_by_default(tmp_path):
    result = run_bench(tmp_path)
    assert result.returncode == 2 and "meant for PostgreSQL" in result.stderr


def test_runner_bench_prints_figures_and_goals(tmp_path):
    result = run_bench(
        tmp_path, "--allow-sqlite", "--iterations", "20", "--gunicorn-iterations", "5", "--runners", "2",
        "--idle-seconds", "3", "--dispatch-samples", "2", "--throughput-jobs", "4", "--concurrency", "2",
    )  # fmt: skip
    assert result.returncode in (0, 1), result.stderr
    out = result.stdout
    assert "Heartbeat: SQL statements / round trips per call" in out
    # SQLite has no key cache (no NOTIFY): the key lookup is a second statement there.
    assert "[FAIL] Heartbeat in 1 round trip (measured 2." in out
    assert "idle: 2 runners long-polling" in out and "SQL statements per runner-minute" in out
    # The podman side: real runners and `podman run --rm`, side by side.
    assert "dispatch: RunJob → SUCCEEDED (true) p50 / p95" in out and "dispatch: podman run --rm (floor)" in out
    assert "throughput: 4 jobs, 2 runners × 2" in out and "dispatch p50 ≤ 1.3× podman run (measured" in out
