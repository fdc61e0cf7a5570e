"""The import graph keeps its layers and has no cycles between packages: the contracts in
pyproject.toml ([tool.importlinter]), checked by import-linter over the real tree."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_import_contracts_are_kept():
    lint_imports = Path(sys.executable).with_name("lint-imports")
    run = subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "0 broken" in run.stdout
