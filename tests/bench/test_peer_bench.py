"""The DRF peer (bench/peer/, bench/peer_bench.py) stays a bench-only thing: the product never
installs or imports Django REST framework, and its requirements never pull the peer's in."""

import os
import re
import subprocess
import sys
from pathlib import Path

from django.conf import settings

from tests.conftest import ROOT

DRF_IMPORT = re.compile(r"^\s*(?:from|import)\s+rest_framework(?:_api_key)?\b", re.MULTILINE)
NOT_PRODUCT = {".venv", "node_modules", "bench", "var", ".git"}


def product_sources():
    for directory, subdirectories, files in os.walk(ROOT):
        subdirectories[:] = [d for d in subdirectories if d not in NOT_PRODUCT]
        yield from (Path(directory, name) for name in files if name.endswith(".py"))


def test_product_settings_install_no_drf():
    assert not [app for app in settings.INSTALLED_APPS if app.startswith("rest_framework")]
    assert not hasattr(settings, "REST_FRAMEWORK")


def test_product_code_never_imports_drf():
    sources = list(product_sources())
    assert ROOT / "uploads" / "rpc.py" in sources  # the walk saw the product
    importing = [path for path in sources if DRF_IMPORT.search(path.read_text(encoding="utf-8"))]
    assert importing == []


def test_the_peer_does_import_drf():
    """The pattern above would see an import: the peer's views have them."""
    assert DRF_IMPORT.search((ROOT / "bench" / "peer" / "views.py").read_text())


def test_requirements_never_pull_the_bench_requirements():
    bench_requirements = (ROOT / "bench" / "requirements.txt").read_text()
    assert "djangorestframework-api-key==" in bench_requirements
    for path in ROOT.glob("requirements*.txt"):
        text = path.read_text().lower()
        assert "bench/requirements" not in text, path.name
        assert "djangorestframework" not in text, path.name


def test_peer_bench_refuses_sqlite(tmp_path):
    database = tmp_path / "peer.sqlite3"
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "peer_bench.py")],
        cwd=ROOT, env={**os.environ, "DATABASE_URL": f"sqlite:///{database}"},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "meant for PostgreSQL" in result.stderr
    assert not database.exists()
