"""Settings errors echo what was set, never a password in it (issue 23)."""

import os
import subprocess
import sys

import pytest

from controlplane.config import SettingError, StrictEnv, masked
from tests.conftest import ROOT


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgres//admin:S3cretPw@db.internal:5432/cp", "postgres//admin:***@db.internal:5432/cp"),
        ("mysql://admin:S3cretPw@db/x", "mysql://admin:***@db/x"),
        ("postgres://admin:S3cretPw@", "postgres://admin:***@"),
        ("admin:S3cretPw@db", "admin:***@db"),
        ("postgres://:S3cretPw@db", "postgres://:***@db"),
    ],
)
def test_every_database_url_error_masks_the_password(monkeypatch, url, shown):
    monkeypatch.setenv("DATABASE_URL", url)
    with pytest.raises(SettingError) as raised:
        StrictEnv().database("DATABASE_URL", default="")
    assert f"DATABASE_URL={shown!r}" in str(raised.value) and "S3cretPw" not in str(raised.value)


def test_other_settings_are_masked_too(monkeypatch):
    monkeypatch.setenv("DATABASE_POOL_MAX_SIZE", "postgres://a:S3cretPw@h")  # pasted into the wrong variable
    with pytest.raises(SettingError) as raised:
        StrictEnv().int("DATABASE_POOL_MAX_SIZE")
    assert "S3cretPw" not in str(raised.value) and "a:***@h" in str(raised.value)


def test_masking_leaves_urls_without_a_password_alone():
    assert masked("postgres://cp@db.internal:5432/controlplane") == "postgres://cp@db.internal:5432/controlplane"
    assert masked("sqlite:///var/x.sqlite3") == "sqlite:///var/x.sqlite3"


def test_manage_py_prints_the_masked_url():
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env["DATABASE_URL"] = "postgres//admin:S3cretPw@db.internal:5432/cp"
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    assert "DATABASE_URL='postgres//admin:***@db.internal:5432/cp'" in result.stderr
    assert "S3cretPw" not in result.stderr + result.stdout
