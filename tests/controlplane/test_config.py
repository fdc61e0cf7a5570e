"""Bad settings end the process at once with one line naming the setting and the fix, no traceback."""

import os
import subprocess
import sys
import time

import pytest

from controlplane.config import SettingError, StrictEnv
from tests.conftest import ROOT

# The pool settings are read for PostgreSQL only (whatever database the suite runs on).
POOLED_POSTGRES = {"DATABASE_URL": "postgres://cp@db.internal:5432/controlplane"}
SECRET = "a-production-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz"


def run(command: list[str], **environment: str) -> tuple[subprocess.CompletedProcess, float]:
    env = {name: value for name, value in os.environ.items() if name not in {"DJANGO_SETTINGS_MODULE", "DEBUG"}}
    env.pop("SECRET_KEY", None)
    env.update(environment)
    started = time.monotonic()
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    return result, time.monotonic() - started


@pytest.mark.parametrize(
    ("environment", "named", "fix"),
    [
        ({"DATABASE_URL": "nonsense"}, "DATABASE_URL='nonsense'", "use postgres://USER:PASSWORD@HOST:5432/NAME"),
        ({"DATABASE_URL": "mysql://db/x"}, "DATABASE_URL='mysql://db/x'", "or sqlite:///PATH"),
        ({"DEBUG": "maybe"}, "DEBUG='maybe' is not a boolean", "set it to true or false"),
        ({"DEBUG": "false"}, "SECRET_KEY is not set and DEBUG is off", "export SECRET_KEY=$(python3 -c"),
        ({"API_KEY_CACHE_SECONDS": "-1"}, "API_KEY_CACHE_SECONDS=-1 is negative", "set 0 (off) or a number"),
        ({"API_KEY_CACHE_SIZE": "0"}, "API_KEY_CACHE_SIZE=0 must be at least 1", "API_KEY_CACHE_SECONDS=0 turns"),
        (
            POOLED_POSTGRES | {"DATABASE_POOL_MAX_SIZE": "ten"},
            "POOL_MAX_SIZE='ten' is not a whole",
            "e.g. DATABASE_POOL",
        ),
    ],
)
def test_manage_py_reports_a_bad_setting_in_one_line(environment, named, fix):
    result, elapsed = run([sys.executable, "manage.py", "check"], **environment)
    assert result.returncode == 1, result
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr  # one line
    assert result.stderr.startswith("manage.py: configuration error: "), result.stderr
    assert named in result.stderr and fix in result.stderr, result.stderr
    assert elapsed < 10  # no connection attempted, no pool wait


def test_gunicorn_with_the_deploy_config_reports_a_bad_setting_before_any_worker_starts():
    command = [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "controlplane.wsgi"]
    command += ["--bind", "127.0.0.1:0"]
    result, elapsed = run(command, DEBUG="maybe", SECRET_KEY=SECRET)
    assert result.returncode == 1, result
    assert "gunicorn: configuration error: DEBUG='maybe' is not a boolean: set it to true or false." in result.stderr
    assert "Traceback" not in result.stderr and "Booting worker" not in result.stderr, result.stderr
    assert elapsed < 10


def test_plain_gunicorn_stops_instead_of_respawning_workers_with_a_bad_setting():
    command = [sys.executable, "-m", "gunicorn", "controlplane.wsgi", "--bind", "127.0.0.1:0", "--workers", "1"]
    result, elapsed = run(command, DATABASE_URL="nonsense", SECRET_KEY=SECRET)
    assert result.returncode == 4, result  # gunicorn's "App failed to load"
    assert "controlplane.wsgi: configuration error: DATABASE_URL='nonsense'" in result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert elapsed < 20


@pytest.mark.parametrize(
    ("text", "value"), [("true", True), ("On", True), ("1", True), ("no", False), ("FALSE", False)]
)
def test_booleans_take_the_usual_spellings(monkeypatch, text, value):
    monkeypatch.setenv("SOME_FLAG", text)
    assert StrictEnv().bool("SOME_FLAG", default=not value) is value


def test_an_unset_boolean_takes_its_default_and_a_bad_one_raises(monkeypatch):
    monkeypatch.delenv("SOME_FLAG", raising=False)
    assert StrictEnv().bool("SOME_FLAG", default=True) is True
    monkeypatch.setenv("SOME_FLAG", "yes please")
    with pytest.raises(SettingError, match="SOME_FLAG='yes please' is not a boolean"):
        StrictEnv().bool("SOME_FLAG", default=True)
