"""`python -m controlplane.dbsetup` (run by `make run` and CI before migrate): creates a missing
database, and fails fast with one line naming DATABASE_URL when it cannot connect."""

import os
import secrets
import subprocess
import sys
import time

from django.db import connection

from controlplane.dbsetup import DatabaseSetupError, ensure_database
from tests.conftest import ROOT
from tests.support.live import free_port


def test_a_missing_database_is_created_for_the_engine_under_test(db, tmp_path):
    config = dict(connection.settings_dict)
    if connection.vendor == "postgresql":
        config["NAME"] = f"test_dbsetup_{secrets.token_hex(4)}"
        try:
            assert ensure_database(config).endswith("(created)")
            assert not ensure_database(config).endswith("(created)")  # a second run finds it
        finally:
            drop_postgres_database(config)
    else:
        config["NAME"] = str(tmp_path / "new" / "controlplane.sqlite3")
        assert "SQLite" in ensure_database(config)
        assert (tmp_path / "new").is_dir()


def drop_postgres_database(config: dict) -> None:
    import psycopg

    params = {
        "user": config["USER"],
        "password": config["PASSWORD"] or None,
        "host": config["HOST"],
        "port": config["PORT"] or None,
    }
    with psycopg.connect(dbname="postgres", autocommit=True, **params) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{config["NAME"]}"')


def test_an_unreachable_server_fails_at_once_naming_the_setting():
    config = {"ENGINE": "django.db.backends.postgresql", "NAME": "x", "HOST": "127.0.0.1", "PORT": free_port()}
    started = time.monotonic()
    try:
        ensure_database(config)
        raise AssertionError("expected DatabaseSetupError")
    except DatabaseSetupError as error:
        assert str(error).startswith("DATABASE_URL: cannot connect to PostgreSQL on 127.0.0.1:")
        assert "start it or correct the URL" in str(error)
    assert time.monotonic() - started < 5


def test_the_command_prints_one_line_and_exits_1():
    env = {**os.environ, "DATABASE_URL": f"postgres://postgres@127.0.0.1:{free_port()}/controlplane"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    result = subprocess.run(
        [sys.executable, "-m", "controlplane.dbsetup"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("dbsetup: DATABASE_URL: cannot connect")
