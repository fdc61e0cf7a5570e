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
    # SQLite has no key cache (no NOTIFY to invalidate it): "cached" resolutions query too.
    lines = out.splitlines()
    assert any(re.fullmatch(r"SQL queries per resolution +1 uncached \(.*\); 1 cached", line) for line in lines), out
    assert "authentication share of request time" in out
    assert "SQL queries per request" in out
    assert "[PASS] one indexed query per uncached key resolution" in out
    assert re.search(r"authentication share of request time +\d+\.\d% cached; \d+\.\d% uncached", out), out
    assert ("[PASS] authentication" in out) or ("[FAIL] authentication" in out)
    # The cheap RPC beside a bare Django view doing the same two lookups, in the same run.
    assert re.search(r"^bare Django view, same lookups: p50 / p95 +\d+ / \d+ µs", out, re.MULTILINE), out
    assert re.search(r"GetNamespace / bare view \(p50\) +\d+\.\d\d×", out), out
    # SQLite has no round trips to count on the wire: there they are the statements.
    assert re.search(r"GetNamespace: 2 statements, 2 round trips, 0 transactions; bare view: 2 statements", out), out
    assert "[PASS] GetNamespace in ≤ 2 database round trips, no transaction" in out
    assert "[PASS] GetJob in ≤ 2 database round trips, no transaction" in out
    assert re.search(r"\[(PASS|FAIL)\] GetNamespace p50 ≤ 1.5× the bare view's", out), out
    assert not (tmp_path / "cp_bench.sqlite3").exists()  # the throwaway database is dropped
