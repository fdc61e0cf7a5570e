"""The examples of docs/sdk-and-cli.md run verbatim against a real gunicorn.

Same convention as the runner of every example (tests/docs/test_examples.py): every ```sh block
in one bash session (`set -euo pipefail`), ```python blocks through `.venv/bin/python -P` in
that session, in document order, with the state the README's "Try it" leaves: namespace team-a
and `$KEY`, an ADMIN key of it, and the server at http://127.0.0.1:$PORT.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.docs.test_examples import script  # the examples runner's convention, one implementation
from tests.support import live

pytestmark = pytest.mark.e2e


def test_sdk_section_examples_run_verbatim(sdk_service, transactional_db, admin_key, tmp_path):
    text = (ROOT / "docs" / "sdk-and-cli.md").read_text()
    generated = script(text)
    assert generated.count("README_PYTHON_BLOCK") == 4  # two python blocks
    assert "cpctl login --issuer" not in generated  # shown (needs a person at a browser), not run
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CP_", "PYTEST"))}
    env.update(
        PORT=str(sdk_service.port),
        KEY=admin_key,
        DATABASE_URL=live.test_database_url(),
        XDG_CONFIG_HOME=str(tmp_path),
        PATH=str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
    )
    result = subprocess.run(["bash", "-c", generated], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    out = result.stdout
    print(out)
    assert "Namespaces  team-a=admin" in out
    assert "Namespaces  team-sdk=operator" in out
    assert '"name": "scratch"' in out
    assert "team-a api_key" in out  # Client().namespace, whoami().kind
    assert "refused: caller holds ROLE_VIEWER in namespace 'team-sdk'" in out
    assert "[('namespace'," in out
    assert out.rstrip().endswith("120")  # every seeded upload, over three pages
