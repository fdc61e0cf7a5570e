"""Makes sure the database DATABASE_URL names exists: `python -m controlplane.dbsetup`.

`make run` and CI run it before `migrate`. Without it a missing PostgreSQL database is found
only by the connection pool, which retries for 30 s before giving up. Here it is created when
the role may, and otherwise the command fails at once with one line naming DATABASE_URL.
"""

from __future__ import annotations

import sys
from pathlib import Path

CONNECT_TIMEOUT_SECONDS = 5


class DatabaseSetupError(Exception):
    pass


def ensure_database(config: dict) -> str:
    """Creates the database of a Django DATABASES entry if it is missing; returns what it did."""
    if config["ENGINE"] == "django.db.backends.sqlite3":
        path = Path(config["NAME"])
        path.parent.mkdir(parents=True, exist_ok=True)
        return f"SQLite database {path}"
    return _ensure_postgres(config)


def _ensure_postgres(config: dict) -> str:
    import psycopg
    from psycopg import sql

    name = config["NAME"]
    where = f"{config.get('HOST') or 'localhost'}:{config.get('PORT') or 5432}"
    params = {
        "user": config.get("USER") or None,
        "password": config.get("PASSWORD") or None,
        "host": config.get("HOST") or None,
        "port": config.get("PORT") or None,
        "connect_timeout": CONNECT_TIMEOUT_SECONDS,
    }
    try:
        psycopg.connect(dbname=name, **params).close()
        return f"PostgreSQL database {name!r} on {where}"
    except psycopg.OperationalError as error:
        target_error = error
    # Connection errors carry no SQLSTATE: ask the server's catalog whether the database exists.
    try:
        with psycopg.connect(dbname="postgres", autocommit=True, **params) as connection:
            if connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
                raise DatabaseSetupError(_cannot_connect(where, target_error))
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.OperationalError:
        raise DatabaseSetupError(_cannot_connect(where, target_error)) from None
    except psycopg.Error as error:
        raise DatabaseSetupError(
            f"DATABASE_URL: database {name!r} does not exist on {where} and could not be created "
            f"({_reason(error)}): create it (createdb -h HOST -U USER {name}) or name an existing one."
        ) from None
    return f"PostgreSQL database {name!r} on {where} (created)"


def _cannot_connect(where: str, error: Exception) -> str:
    return f"DATABASE_URL: cannot connect to PostgreSQL on {where} ({_reason(error)}): start it or correct the URL."


def _reason(error: Exception) -> str:
    """The server's own words, without libpq's "connection to server at ... failed:" preamble."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text.rsplit("failed: ", 1)[-1].removeprefix("FATAL: ")


def main() -> None:
    import os

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")
    from django.conf import settings

    from controlplane.config import SettingError, report_and_exit

    try:
        config = settings.DATABASES["default"]
    except SettingError as error:
        report_and_exit(error, "dbsetup")
    try:
        print(f"database: {ensure_database(config)}", file=sys.stderr)
    except DatabaseSetupError as error:
        raise SystemExit(f"dbsetup: {error}") from None


if __name__ == "__main__":
    main()
