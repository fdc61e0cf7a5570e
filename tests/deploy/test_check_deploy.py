"""`manage.py check --deploy` with production settings prints no warnings."""

import os
import secrets
import subprocess
import sys

import pytest

from tests.conftest import ROOT


@pytest.mark.parametrize(
    "database_url",
    ["postgres://cp:secret@db.internal:5432/controlplane", "sqlite:////var/lib/controlplane/db.sqlite3"],
)
def test_check_deploy_is_clean_with_production_settings(database_url):
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in {"SILENCED_SYSTEM_CHECKS", "DJANGO_SETTINGS_MODULE"}
    }
    env.update(
        DEBUG="false",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="cp.example.com",
        DATABASE_URL=database_url,
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    # Only Django's W002/W003, which controlplane.auth.checks replaces for our middleware.
    assert "System check identified no issues (2 silenced)." in output
    assert "WARNING" not in output


def test_missing_browser_protection_is_reported_in_place_of_djangos_checks(settings):
    from controlplane.auth.checks import check_browser_middleware

    assert check_browser_middleware() == []
    settings.MIDDLEWARE = [
        m for m in settings.MIDDLEWARE if not m.endswith(("CsrfViewMiddleware", "XFrameOptionsMiddleware"))
    ]
    assert {w.id for w in check_browser_middleware()} == {"controlplane.W002", "controlplane.W003"}
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, "django.middleware.csrf.CsrfViewMiddleware"]
    assert {w.id for w in check_browser_middleware()} == {"controlplane.W002"}
