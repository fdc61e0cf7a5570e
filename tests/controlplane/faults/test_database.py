"""Which database errors are outages (controlplane/faults/database.py): real errors, real drivers."""

import json
import sqlite3

import psycopg
import pytest
from django.db import DatabaseError, IntegrityError, OperationalError
from psycopg_pool import ConnectionPool, PoolTimeout

from controlplane.connect_errors import error_response
from controlplane.faults.classify import classify
from controlplane.faults.database import unavailable_error
from tests.support.live import free_port


def django_error(cls, cause: BaseException):
    """As Django's wrap_database_errors raises it: the driver's error as __cause__."""
    try:
        raise cls(str(cause)) from cause
    except cls as exc:
        return exc


def refused() -> psycopg.OperationalError:
    try:
        psycopg.connect(f"host=127.0.0.1 port={free_port()} user=postgres connect_timeout=2")
    except psycopg.OperationalError as exc:
        return exc
    raise AssertionError("nothing should listen on a free port")


def pool_timeout() -> PoolTimeout:
    pool = ConnectionPool(f"host=127.0.0.1 port={free_port()}", min_size=0, max_size=1, timeout=0.1, open=True)
    try:
        pool.getconn()
    except PoolTimeout as exc:
        return exc
    finally:
        pool.close()
    raise AssertionError("the pool cannot connect")


@pytest.mark.parametrize(
    "cause",
    [
        refused(),
        pool_timeout(),
        psycopg.errors.AdminShutdown("terminating connection due to administrator command"),
        psycopg.errors.TooManyConnections("sorry, too many clients already"),
        sqlite3.OperationalError("database is locked"),
    ],
    ids=["refused", "pool timeout", "admin shutdown", "too many connections", "sqlite locked"],
)
def test_outages_are_unavailable_with_retry_after(cause):
    error = unavailable_error(django_error(OperationalError, cause))
    assert error is not None and error.code.wire_name == "unavailable" and error.code.http_status == 503
    assert error.retry_after == 1 and "database is unavailable" in error.message


@pytest.mark.parametrize(
    "exc",
    [
        django_error(OperationalError, psycopg.errors.QueryCanceled("canceling statement due to statement timeout")),
        django_error(OperationalError, psycopg.errors.DeadlockDetected("deadlock detected")),
        django_error(OperationalError, sqlite3.OperationalError("no such table: x")),
        django_error(IntegrityError, psycopg.errors.UniqueViolation("duplicate key")),
        django_error(DatabaseError, psycopg.errors.SyntaxError("syntax error")),
        RuntimeError("not a database error"),
    ],
    ids=["cancelled", "deadlock", "sqlite missing table", "unique", "syntax", "runtime"],
)
def test_other_errors_are_not_outages(exc):
    assert unavailable_error(exc) is None


def test_an_outage_outside_the_runtime_answers_unavailable_with_retry_after():
    # /auth/* and the shedding middleware write errors with connect_errors.error_response.
    try:
        raise OperationalError("pool timeout") from PoolTimeout("no connection in time")
    except OperationalError as exc:
        response = error_response(classify(exc))
    assert response.status_code == 503
    assert response["Retry-After"] == "1"
    assert json.loads(response.content)["code"] == "unavailable"
