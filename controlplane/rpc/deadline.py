"""Cancelling database work when a call's deadline (Connect-Timeout-Ms) elapses.

On both databases, no new query starts after the deadline (an execute wrapper refuses it).
A query already running is cancelled at the deadline:

- SQLite: a progress handler interrupts the running statement.
- PostgreSQL, inside a write's transaction: a transaction-local statement_timeout equal to the
  remaining time, so the server itself cancels a query that would outlive the call (one
  `set_config` round trip, only when the client sent a deadline).
- PostgreSQL, read-only calls: they run without a transaction (autocommit), where SET LOCAL
  cannot be used, and a session-wide SET would need a second round trip to undo. So a
  watchdog thread sends the server a cancel request for a statement still running at its
  call's deadline: no round trip at all while calls finish in time, one cancel connection
  (made by libpq, outside the pool) for a call that does not.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import os
import threading
import time

from django.db import connection

from controlplane.errors import Error

logger = logging.getLogger("controlplane.rpc")

# PostgreSQL's statement_timeout is an int of milliseconds (about 24.8 days at most),
# while Connect-Timeout-Ms allows 10 digits: longer deadlines are capped, not refused.
POSTGRES_MAX_TIMEOUT_MS = 2**31 - 1
CANCEL_TIMEOUT_SECONDS = 5.0  # how long the watchdog waits for the server to take a cancel request


@contextlib.contextmanager
def database_deadline(deadline: float | None, *, in_transaction: bool = True):
    """Bounds the database work of the block by `deadline` (a time.monotonic() value).

    in_transaction: the block runs inside transaction.atomic() (so SET LOCAL lasts exactly
    the call); False for read-only calls, which open none.
    """
    if deadline is None:
        yield
        return
    remaining_ms = _remaining_ms(deadline)
    guard = _refuse_after(deadline)
    if connection.vendor == "postgresql":
        if in_transaction:
            with connection.cursor() as cursor:
                timeout_ms = min(remaining_ms, POSTGRES_MAX_TIMEOUT_MS)
                cursor.execute("SELECT set_config('statement_timeout', %s, true)", [str(timeout_ms)])
        else:
            guard = _cancel_at(deadline)
    elif connection.vendor == "sqlite":
        connection.ensure_connection()
        connection.connection.set_progress_handler(lambda: int(time.monotonic() >= deadline), 1000)
    try:
        with connection.execute_wrapper(guard):
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


def _cancel_at(deadline: float):
    def wrapper(execute, sql, params, many, context):
        _remaining_ms(deadline)
        with watchdog.watching(context["connection"].connection, deadline):
            return execute(sql, params, many, context)

    return wrapper


class Watchdog:
    """One daemon thread that cancels PostgreSQL statements still running at their deadline.

    A statement is watched only while its execute() runs. When the watchdog cancels one, the
    statement's thread waits, before it leaves `watching` (and could start another statement
    on that connection), until the server has taken the cancel request; a server that gets a
    cancel for a connection gone idle meanwhile ignores it. Other threads never wait for it.
    """

    def __init__(self):
        self._reset()

    def _reset(self) -> None:
        self._lock = threading.Condition()
        self._watched: dict[int, object] = {}  # ticket → psycopg connection
        self._cancelling: dict[int, threading.Event] = {}  # ticket → set once the request is sent
        self._deadlines: list[tuple[float, int]] = []  # heap of (deadline, ticket)
        self._tickets = itertools.count()
        self._thread: threading.Thread | None = None

    @contextlib.contextmanager
    def watching(self, pg_connection, deadline: float):
        with self._lock:
            ticket = next(self._tickets)
            self._watched[ticket] = pg_connection
            earliest = not self._deadlines or deadline < self._deadlines[0][0]
            heapq.heappush(self._deadlines, (deadline, ticket))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="db-deadline-watchdog", daemon=True)
                self._thread.start()
            elif earliest:
                self._lock.notify()  # else the watchdog already wakes up early enough
        try:
            yield
        finally:
            with self._lock:
                self._watched.pop(ticket, None)
                cancelling = self._cancelling.pop(ticket, None)
                if len(self._deadlines) > 2 * len(self._watched) + 64:
                    # Finished statements' entries, kept until they come up; far deadlines
                    # would let them pile up.
                    self._deadlines = [entry for entry in self._deadlines if entry[1] in self._watched]
                    heapq.heapify(self._deadlines)
            if cancelling is not None:
                cancelling.wait()

    def _run(self) -> None:
        with self._lock:
            while True:
                while self._deadlines and self._deadlines[0][1] not in self._watched:
                    heapq.heappop(self._deadlines)
                if not self._deadlines:
                    self._lock.wait()
                    continue
                deadline, ticket = self._deadlines[0]
                delay = deadline - time.monotonic()
                if delay > 0:
                    self._lock.wait(delay)
                    continue
                heapq.heappop(self._deadlines)
                pg_connection = self._watched.pop(ticket)
                sent = self._cancelling[ticket] = threading.Event()
                self._lock.release()  # a slow cancel holds up no other statement
                try:
                    self._cancel(pg_connection)
                finally:
                    sent.set()
                    self._lock.acquire()

    @staticmethod
    def _cancel(pg_connection) -> None:
        try:
            pg_connection.cancel_safe(timeout=CANCEL_TIMEOUT_SECONDS)
        except Exception:  # the statement then runs on; the call still ends deadline_exceeded
            logger.warning("could not cancel a statement past its deadline", exc_info=True)


watchdog = Watchdog()
# A forked worker starts with no watchdog thread (and must not inherit a held lock).
os.register_at_fork(after_in_child=watchdog._reset)


def is_cancellation(exc: BaseException) -> bool:
    """True for the database's own 'statement cancelled' errors."""
    cause = exc.__cause__ or exc
    name = type(cause).__name__
    if name == "QueryCanceled":  # psycopg: SQLSTATE 57014
        return True
    return "interrupted" in str(cause).lower() and connection.vendor == "sqlite"
