"""What a block of code sends to the database, BEGIN and COMMIT included.

CaptureQueriesContext lists the statements Django's cursors run, but not the BEGIN and
COMMIT that transaction.atomic() makes psycopg send. So on PostgreSQL this reads libpq's
own protocol trace of the connection: every message that went over the wire. A round trip
is the client sending and then reading the server's answer: each run of client messages
followed by one from the server (so a pipeline's Flush and its Sync sent apart are two,
although the server sends one ReadyForQuery). On SQLite, which has no round trips, it
records the statements and whether each ran inside a transaction of the real connection.
"""

from __future__ import annotations

import re
import tempfile

from django.db import connection
from django.db.backends.signals import connection_created

_SENT = re.compile(r'^F\t\d+\t(Query|Parse)\t (?:"[^"]*" )?"(.*)"', re.DOTALL)


class RoundTrips:
    def __init__(self):
        self.statements: list[tuple[str, bool]] = []  # (SQL, inside a transaction)
        self.sent: list[str] = []  # PostgreSQL: each query's text as sent, BEGIN/COMMIT included
        self.client_messages: list[str] = []  # PostgreSQL: the type of each message sent (Bind, Sync...)
        self.round_trips = 0  # PostgreSQL: exchanges (client messages, then the server's answer)
        self._traced: dict[int, tuple[object, object]] = {}  # id → (connection, its trace file)

    def __enter__(self) -> RoundTrips:
        self._wrapper = connection.execute_wrapper(self._record)
        self._wrapper.__enter__()
        if connection.vendor == "postgresql":
            connection_created.connect(self._on_connect)
            if connection.connection is not None:
                self._trace(connection.connection)
        return self

    def __exit__(self, *exc_info) -> None:
        self._wrapper.__exit__(*exc_info)
        if connection.vendor != "postgresql":
            return
        connection_created.disconnect(self._on_connect)
        for pg, trace_file in self._traced.values():
            if not pg.closed:
                pg.pgconn.untrace()
            trace_file.seek(0)
            self._parse(trace_file.read())
            trace_file.close()

    @property
    def transactions(self) -> int:
        """BEGINs sent (PostgreSQL) / statements run inside a transaction (SQLite)."""
        if connection.vendor == "postgresql":
            return sum(1 for sql in self.sent if sql.upper().startswith("BEGIN"))
        return sum(1 for _, in_transaction in self.statements if in_transaction)

    def _record(self, execute, sql, params, many, context):
        real = context["connection"].connection
        in_transaction = bool(getattr(real, "in_transaction", False)) or context["connection"].in_atomic_block
        self.statements.append((sql, in_transaction))
        return execute(sql, params, many, context)

    def _on_connect(self, sender, connection, **kwargs):
        self._trace(connection.connection)

    def _trace(self, pg) -> None:
        if id(pg) in self._traced:
            return
        from psycopg import pq

        # A file per connection: libpq buffers each trace on its own, so the lines of two
        # connections (a pool's) sharing a file would interleave out of order.
        trace_file = tempfile.TemporaryFile("w+")  # noqa: SIM115 - closed in __exit__
        pg.pgconn.trace(trace_file.fileno())
        pg.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        self._traced[id(pg)] = (pg, trace_file)

    def _parse(self, trace: str) -> None:
        sending = False
        for line in trace.splitlines():
            if line.startswith("F\t"):
                sending = True
                self.client_messages.append(line.split("\t", 3)[2])
            elif line.startswith("B\t") and sending:
                self.round_trips += 1
                sending = False
            match = _SENT.match(line)
            if match:
                self.sent.append(match.group(2))
