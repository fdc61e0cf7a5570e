"""Django's PostgreSQL backend with a pool fit for outages (ENGINE "controlplane.faults.postgresql").

Changes to the psycopg pool Django builds:
- a call waits for a connection at most DATABASE_POOL_TIMEOUT, and no longer than what is
  left of its deadline (Connect-Timeout-Ms), then gets PoolTimeout → `unavailable`; while
  the pool's latest attempt to connect failed (the database is down), at most two
  reconnect intervals, so an outage is answered in a fraction of a second;
- a lost connection is retried every DATABASE_POOL_RECONNECT_INTERVAL seconds instead of
  with psycopg_pool's exponential backoff (1, 2, 4 ... 16 s), so the service recovers within
  that interval of the database returning, however long it was away.
Connections are checked before they are handed out (`check_connection`), so calls after a
database restart do not get a dead connection, at no round trip for a healthy one.

Also: timestamptz columns are read by psycopg's C loader (timestamps.py).
"""

from __future__ import annotations

import logging
import select
import time

from django.conf import settings
from django.db.backends.base.base import NO_DB_ALIAS
from django.db.backends.postgresql import base
from psycopg_pool import ConnectionPool
from psycopg_pool.base import AttemptWithBackoff

from controlplane.observability import metrics

from ..arrival import remaining_seconds
from . import timestamps

logger = logging.getLogger("controlplane.faults")


def check_connection(conn) -> None:
    """The pool's check before handing out a connection: raises if it is unusable.

    An idle connection has nothing to read; one whose socket is readable was closed by the
    server (a restart, an idle timeout: EOF or a FATAL message) or holds a notice. Only then
    is it checked with a round trip (psycopg_pool's own check), so a healthy connection costs
    a poll of its socket, not a query.
    """
    if conn.closed or conn.broken:
        raise OSError("connection is closed")
    readable, _, _ = select.select([conn.fileno()], [], [], 0)
    if readable:
        ConnectionPool.check_connection(conn)


class _SteadyRetry(AttemptWithBackoff):
    DELAY_BACKOFF = 1.0  # a constant interval: outages end at unpredictable times

    def __init__(self, *, timeout: float):
        super().__init__(timeout=timeout)
        self.INITIAL_DELAY = settings.DATABASE_POOL_RECONNECT_INTERVAL


class BoundedPool(ConnectionPool):
    _unreachable = False  # the pool's latest attempt to connect failed

    def getconn(self, timeout: float | None = None):
        if timeout is None:
            timeout = remaining_seconds(self.timeout)
            if self._unreachable:
                # The database is known to be down: wait for the next reconnect attempt or two
                # (a connection it makes is handed straight over), not the whole pool timeout.
                timeout = min(timeout, 2 * settings.DATABASE_POOL_RECONNECT_INTERVAL)
        started = time.perf_counter()
        if self._pool:  # an idle connection: handed out at once, nobody waits
            conn = super().getconn(timeout)
        else:
            metrics.POOL_WAITING.inc()
            try:
                conn = super().getconn(timeout)
            finally:
                metrics.POOL_WAITING.dec()
        metrics.record_pool_checkout(self._nconns, time.perf_counter() - started)
        return conn

    def putconn(self, conn) -> None:
        super().putconn(conn)
        metrics.record_pool_return(self._nconns)

    def _connect(self, timeout: float | None = None):
        try:
            conn = super()._connect(timeout)
        except Exception as exc:
            if not self._unreachable:  # once per outage, not at every reconnect attempt
                interval = settings.DATABASE_POOL_RECONNECT_INTERVAL
                logger.warning("database unreachable; retrying every %ss: %s", interval, exc)
            self._unreachable = True
            raise
        if self._unreachable:
            logger.warning("database reachable again")
        self._unreachable = False
        return conn

    def _add_connection(self, attempt, growing: bool = False) -> None:
        # psycopg_pool 3.3's hook for (re)connecting; pinned in requirements.txt.
        super()._add_connection(attempt or _SteadyRetry(timeout=self.reconnect_timeout), growing)


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self):
        params = super().get_connection_params()
        if "context" in params:  # psycopg 3
            params["context"] = timestamps.adapters_template(settings.USE_TZ, self.timezone)
        return params

    @property
    def pool(self):
        # As Django's own property, but building a BoundedPool that always checks connections.
        options = self.settings_dict["OPTIONS"].get("pool")
        if self.alias == NO_DB_ALIAS or not options:
            return None
        if self.alias not in self._connection_pools:
            kwargs = self.get_connection_params()
            kwargs["autocommit"] = True  # Django sets its own mode after checkout
            pool = BoundedPool(
                kwargs=kwargs,
                open=False,
                configure=self._configure_connection,
                check=check_connection,
                **({} if options is True else options),
            )
            self._connection_pools.setdefault(self.alias, pool)
        return self._connection_pools[self.alias]
