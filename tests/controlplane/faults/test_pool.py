"""The bounded pool (controlplane/faults/postgresql): waits end with the deadline, and early in an outage."""

import time

import psycopg
import pytest
from psycopg_pool import PoolTimeout

from controlplane.faults.arrival import current_deadline
from controlplane.faults.postgresql.base import BoundedPool, check_connection
from tests.controlplane.faults.cluster import PrivateCluster
from tests.support.live import free_port


@pytest.fixture
def unreachable_pool():
    """A pool whose database is down (nothing listens on its port); it may wait up to 5 s."""
    pool = BoundedPool(
        f"host=127.0.0.1 port={free_port()} connect_timeout=2", min_size=0, max_size=2, timeout=5, open=False
    )
    pool.open()
    yield pool
    pool.close()


def timed_getconn(pool) -> float:
    started = time.monotonic()
    with pytest.raises(PoolTimeout):
        pool.getconn()
    return time.monotonic() - started


def with_deadline(seconds: float, fn):
    token = current_deadline.set(time.monotonic() + seconds)
    try:
        return fn()
    finally:
        current_deadline.reset(token)


def test_the_wait_ends_with_the_calls_deadline(unreachable_pool):
    assert 0.25 <= with_deadline(0.3, lambda: timed_getconn(unreachable_pool)) < 1.0


def test_once_the_database_is_known_down_a_call_waits_two_reconnect_intervals(unreachable_pool, settings):
    settings.DATABASE_POOL_RECONNECT_INTERVAL = 0.2
    with_deadline(0.3, lambda: timed_getconn(unreachable_pool))  # the pool tries, and learns it is down
    assert unreachable_pool._unreachable
    assert timed_getconn(unreachable_pool) < 2 * 0.2 + 0.3  # not the pool's 5 s


class CountingConnection(psycopg.Connection):
    """A real connection that counts the statements sent on it."""

    def execute(self, *args, **kwargs):
        self.statements = getattr(self, "statements", 0) + 1
        return super().execute(*args, **kwargs)


@pytest.fixture(scope="module")
def cluster():
    cluster = PrivateCluster().init()
    yield cluster
    cluster.destroy()


def test_the_checkout_check_costs_no_query_and_catches_a_restarted_database(cluster):
    connection = CountingConnection.connect(cluster.url, autocommit=True)
    try:
        check_connection(connection)  # healthy: a poll of the socket, no round trip
        check_connection(connection)
        assert getattr(connection, "statements", 0) == 0
        cluster.stop()  # the server ends its sessions, as in a restart or failover
        cluster.start()
        with pytest.raises(psycopg.OperationalError):
            check_connection(connection)  # the socket spoke while idle: verified, and found dead
        assert connection.statements == 1
    finally:
        connection.close()
