"""The revocation barrier (apikeys.keycache.await_everywhere): it waits for every listener, gives
up after API_KEY_REVOCATION_WAIT_SECONDS naming the one that stayed silent, and costs nothing where
there is no cache (SQLite)."""

from __future__ import annotations

import logging
import time

import psycopg
import pytest
from django.db import connection

from apikeys import keycache


@pytest.fixture
def cache_on(settings):
    settings.API_KEY_CACHE_SECONDS = 5
    settings.API_KEY_REVOCATION_WAIT_SECONDS = 0.5


def test_a_silent_listener_is_waited_for_then_named(transactional_db, cache_on, caplog):
    caplog.set_level(logging.WARNING, logger="apikeys.keycache")
    if connection.vendor != "postgresql":
        started = time.monotonic()
        keycache.forget("0" * 64)  # no cache anywhere: nothing to wait for
        assert time.monotonic() - started < 0.1 and not caplog.records
        return
    cache = keycache.cache_for("default")
    cache.get("0" * 64)  # starts this process's listener, which confirms barriers
    deadline = time.monotonic() + 10
    while not cache.listening and time.monotonic() < deadline:
        time.sleep(0.05)
    assert keycache.await_everywhere("default") is True and not caplog.records

    # A process whose listener is connected but never confirms (stuck): the wait ends, and says so.
    params = keycache.own_connection_params("default", application_name=keycache.listener_name(424242))
    with psycopg.connect(**params) as silent:
        silent.execute(f"LISTEN {keycache.CHANNEL}")
        started = time.monotonic()
        assert keycache.await_everywhere("default") is False
        assert 0.5 <= time.monotonic() - started < 2
        pid = silent.info.backend_pid
    assert f"backend pids [{pid}]" in caplog.text
