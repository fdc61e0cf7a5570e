"""bench/observability_bench.py runs end to end (on SQLite here, tiny numbers) and refuses SQLite by default."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.conftest import ROOT


def run_bench(tmp_path, *args):
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'source.sqlite3'}"}
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / "observability_bench.py"), *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_bench_refuses_sqlite_by_default(tmp_path):
    result = run_bench(tmp_path)
    assert result.returncode == 2 and "meant for PostgreSQL" in result.stderr


def test_bench_prints_the_four_configurations_side_by_side(tmp_path):
    result = run_bench(tmp_path, "--allow-sqlite", "--iterations", "40", "--blocks", "2", "--http-calls", "100")
    assert result.returncode in (0, 1), result.stderr
    out = result.stdout
    for name in ("off", "metrics", "metrics+logs", "metrics+logs+tracing"):
        assert re.search(rf"^{re.escape(name)} +\d+\.\d +\d+\.\d +\d\.\d{{3}}x +\d+\.\d +\d\.\d{{3}}x$", out, re.M), out
    # Tracing really ran: a server span and at least one SQL span per call.
    spans = float(re.search(r"spans exported per traced call: (\d+\.\d)", out)[1])
    assert spans >= 2.0
    assert re.search(r"^\[(PASS|FAIL)\] metrics\+logs: CPU p50 \d\.\d{3}x off \(paired\)", out, re.M)
    assert re.search(r"^\[(PASS|FAIL)\] metrics\+logs\+tracing: CPU p50 \d\.\d{3}x off \(paired\)", out, re.M)
    # Over HTTP: the four gunicorn servers, each answering, with its worker's CPU per call.
    http = out.split("over HTTP: gunicorn")[1]
    row = r" +\d+\.\d +\d+\.\d +\d\.\d{3}x +\d+\.\d +\d\.\d{3}x$"
    for name in ("off", "metrics", "metrics+logs", "metrics+logs+tracing"):
        assert re.search(rf"^{re.escape(name)}{row}", http, re.M), out
    verdict = r" over HTTP: p50 \d\.\d{3}x off \(paired\), [+-]\d"
    for name in ("metrics+logs", "metrics+logs+tracing"):
        assert re.search(rf"^\[(PASS|FAIL)\] {re.escape(name)}{verdict}", out, re.M)
