"""Cancelling database work when a call's deadline (Connect-Timeout-Ms) elapses.

PostgreSQL: a transaction-local statement_timeout equal to the remaining time, so the
server itself cancels a query that would outlive the call. SQLite: a progress handler
interrupts the running statement. On both, no new query starts after the deadline.
"""

from __future__ import annotations

import contextlib
import time

from django.db import connection

from controlplane.errors import Error

# PostgreSQL's statement_timeout is an int of milliseconds (about 24.8 days at most),
# while Connect-Timeout-Ms allows 10 digits: longer deadlines are capped, not refused.
POSTGRES_MAX_TIMEOUT_MS = 2**31 - 1


@contextlib.contextmanager
def database_deadline(deadline: float | None):
    """Must be entered inside transaction.atomic(), so SET LOCAL lasts exactly the call."""
    if deadline is None:
        yield
        return
    remaining_ms = _remaining_ms(deadline)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            timeout_ms = min(remaining_ms, POSTGRES_MAX_TIMEOUT_MS)
            cursor.execute("SELECT set_config('statement_timeout', %s, true)", [str(timeout_ms)])
    elif connection.vendor == "sqlite":
        connection.ensure_connection()
        connection.connection.set_progress_handler(lambda: int(time.monotonic() >= deadline), 1000)
    try:
        with connection.execute_wrapper(_refuse_after(deadline)):
            yield
    finally:
        if connection.vendor == "sqlite" and connection.connection is not None:
            connection.connection.set_progress_handler(None, 0)


def _remaining_ms(deadline: float) -> int:
    remaining = int((deadline - time.monotonic()) * 1000)
    if remaining <= 0:
        raise Error.deadline_exceeded()
    return remaining


def _refuse_after(deadline: float):
    def wrapper(execute, sql, params, many, context):
        _remaining_ms(deadline)
        return execute(sql, params, many, context)

    return wrapper


def is_cancellation(exc: BaseException) -> bool:
    """True for the database's own 'statement cancelled' errors."""
    cause = exc.__cause__ or exc
    name = type(cause).__name__
    if name == "QueryCanceled":  # psycopg: SQLSTATE 57014
        return True
    return "interrupted" in str(cause).lower() and connection.vendor == "sqlite"
