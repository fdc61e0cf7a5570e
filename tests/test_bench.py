"""The benchmark script runs end to end (on SQLite here, with tiny numbers) and refuses SQLite by default."""

import os
import re
import subprocess
import sys

from tests.conftest import ROOT


def run_bench(tmp_path, *args):
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'source.sqlite3'}"}
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / "auth_bench.py"), *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_bench_refuses_sqlite_by_default(tmp_path):
    result = run_bench(tmp_path)
    assert result.returncode == 2
    assert "meant for PostgreSQL" in result.stderr
    assert not (tmp_path / "cp_bench.sqlite3").exists()


def test_bench_prints_figures_and_goals(tmp_path):
    result = run_bench(
        tmp_path, "--allow-sqlite", "--iterations", "30", "--filler-keys", "20", "--gunicorn-seconds", "0"
    )
    assert result.returncode in (0, 1), result.stderr
    assert "figures are not comparable" in result.stderr
    out = result.stdout
    assert re.search(r"^SQL queries per resolution +1 \(", out, re.MULTILINE), out
    assert "authentication share of request time" in out
    assert "SQL queries per request" in out
    assert "[PASS] one indexed query per key resolution" in out
    assert ("[PASS] authentication" in out) or ("[FAIL] authentication" in out)
    assert not (tmp_path / "cp_bench.sqlite3").exists()  # the throwaway database is dropped
