"""Which database errors mean "the database cannot be reached now" (→ Connect `unavailable`).

A client can retry these later: the database is down or restarting, the network to it
failed, or the connection pool had no connection within its bounded wait. Everything
else (a bad query, a constraint) stays an internal error: retrying would not help.
"""

from __future__ import annotations

from django.db import InterfaceError, OperationalError

from controlplane.errors import Error

# What Retry-After says: the pool reconnects within a fraction of a second of the
# database returning, so clients need not back off for long.
RETRY_AFTER_SECONDS = 1

# SQLSTATE classes and codes of a database that is going away or not there yet:
# 08 connection exception, 53 insufficient resources (e.g. too_many_connections),
# 57P01-57P03 admin shutdown, crash shutdown, cannot connect now.
_UNAVAILABLE_SQLSTATE_CLASSES = ("08", "53")
_UNAVAILABLE_SQLSTATES = {"57P01", "57P02", "57P03"}
_SQLITE_UNAVAILABLE = ("database is locked", "unable to open database")


def unavailable_error(exc: BaseException) -> Error | None:
    """An `unavailable` Error (HTTP 503, Retry-After) for an outage, else None."""
    if not isinstance(exc, OperationalError | InterfaceError):
        return None
    cause = exc.__cause__ or exc
    if not _is_outage(cause):
        return None
    return Error.unavailable("the database is unavailable; retry later", retry_after=RETRY_AFTER_SECONDS)


def _is_outage(cause: BaseException) -> bool:
    if type(cause).__name__ in ("PoolTimeout", "TooManyRequests"):  # psycopg_pool: no connection in time
        return True
    module = type(cause).__module__
    if module.startswith("psycopg"):
        sqlstate = getattr(cause, "sqlstate", None)
        if sqlstate is None:
            # No server answer at all: connection refused, reset, closed, or timed out.
            return True
        return sqlstate[:2] in _UNAVAILABLE_SQLSTATE_CLASSES or sqlstate in _UNAVAILABLE_SQLSTATES
    if module.startswith("sqlite3"):
        return any(text in str(cause).lower() for text in _SQLITE_UNAVAILABLE)
    return False
