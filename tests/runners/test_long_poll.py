"""AcquireWork's wait: woken by NOTIFY on PostgreSQL, holding no database connection while it
waits; on SQLite (no NOTIFY) an immediate answer with the interval to poll at."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection

from controlplane.auth import Role
from workloads.services import jobs

from .conftest import SERVER_APPLICATION_NAME, SYSTEM

pytestmark = pytest.mark.django_db(transaction=True)


def server_connections() -> list:
    """The live server's connections to the test database, but for its listeners."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid, state, left(query, 60) FROM pg_stat_activity WHERE application_name = %s",
            [SERVER_APPLICATION_NAME],
        )
        return cursor.fetchall()


def test_a_waiting_runner_is_woken_by_new_work_and_holds_no_connection(make_runner, namespace, make_key):
    runner = make_runner()
    if connection.vendor != "postgresql":
        reply = runner.acquire_reply(wait=10)
        assert not reply.HasField("work") and reply.retry_after.seconds == 2  # RUNNER_POLL_SECONDS
        return
    runner.acquire_reply(wait=0)  # the workers' listeners are up from here on
    got = {}

    def wait():
        started = time.monotonic()
        got["work"] = runner.acquire(wait=18)
        got["returned"] = time.monotonic()
        got["waited"] = got["returned"] - started

    waiter = threading.Thread(target=wait)
    waiter.start()
    time.sleep(1.0)
    # A connection held by the wait would be there all along (15 s); one that a process is just
    # closing (a request's, the previous test module's server's) goes.
    deadline = time.monotonic() + 5.0
    while (waiting_connections := server_connections()) and time.monotonic() < deadline:
        time.sleep(0.05)
    queued_at = time.monotonic()
    job = jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox")
    waiter.join(20)
    assert got["work"].work_id == job.job_id
    assert got["returned"] - queued_at < 2.0  # NOTIFY, not the 60 s recheck nor the 15 s wait
    assert waiting_connections == []
    assert make_key("team-a", Role.VIEWER)  # the database still answers after the wait


def test_a_long_poll_ends_before_the_callers_deadline(make_runner, namespace):
    runner = make_runner()
    started = time.monotonic()
    reply = runner.acquire_reply(wait=15, timeout_ms=3000)
    assert not reply.HasField("work") and time.monotonic() - started < 3.0
