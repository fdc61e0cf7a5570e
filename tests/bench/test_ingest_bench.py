"""bench/ingest_bench.py refuses anything but PostgreSQL, with exit status 2 (cannot run)."""

import os
import subprocess
import sys

from tests.conftest import ROOT


def test_ingest_bench_refuses_sqlite(tmp_path):
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'source.sqlite3'}"}
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "ingest_bench.py"), "--count", "10"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2
    assert "needs PostgreSQL" in result.stderr
