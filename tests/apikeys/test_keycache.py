"""apikeys.keycache: resolved keys cached per process, evicted by PostgreSQL NOTIFY, failing closed.

These tests need committed data (`transactional_db`): the trigger's NOTIFY is delivered at
commit, to the cache's own listener connection. On SQLite there is no cache: every call queries.
"""

from __future__ import annotations

import os
import time

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apikeys import keycache
from apikeys.authentication import ApiKeyAuthenticator
from apikeys.models import ApiKey
from apikeys.services import revoke_api_key
from controlplane.auth import Role
from controlplane.auth.authenticators import AuthenticationFailed
from namespaces.models import Namespace
from namespaces.services import create_namespace
from tests.conftest import SYSTEM

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def key_cache_on(settings):
    settings.API_KEY_CACHE_SECONDS = 60  # the default; conftest turns it off for other tests


def wait_for(condition, timeout: float = 5.0) -> float:
    """Seconds until `condition()` held; fails the test if it does not within `timeout`."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, f"{condition.__doc__ or condition} did not hold in {timeout}s"
        time.sleep(0.001)
    return time.monotonic() - started


def queries_of(call) -> int:
    with CaptureQueriesContext(connection) as captured:
        call()
    return len(captured)


def cached_token(make_key, role=Role.VIEWER, namespace="team-a") -> str:
    """A key this process has resolved once, so that (on PostgreSQL) it is in the cache."""
    token = make_key(namespace, role)
    authenticator = ApiKeyAuthenticator()
    authenticator.authenticate(token)  # starts the listener
    cache = keycache.cache_for("default")
    if cache is not None:
        # Stored once read while listening, and once the NOTIFY of its first use's last_used
        # write (which evicts it) has gone by.
        wait_for(lambda: queries_of(lambda: authenticator.authenticate(token)) == 0)
    return token


def refused(token: str) -> bool:
    try:
        ApiKeyAuthenticator().authenticate(token)
    except AuthenticationFailed:
        return True
    return False


def test_a_cached_key_costs_no_query(namespace, make_key):
    token = cached_token(make_key)
    expected = 0 if connection.vendor == "postgresql" else 1  # SQLite: no cache, always the lookup
    assert queries_of(lambda: ApiKeyAuthenticator().authenticate(token)) == expected


def test_sqlite_and_a_zero_lifetime_always_query(namespace, make_key, settings):
    settings.API_KEY_CACHE_SECONDS = 0
    token = cached_token(make_key)
    assert keycache.cache_for("default") is None
    assert [queries_of(lambda: ApiKeyAuthenticator().authenticate(token)) for _ in range(3)] == [1, 1, 1]


def test_inside_a_transaction_the_database_answers(namespace, make_key):
    token = cached_token(make_key)
    with transaction.atomic():
        # Not yet committed, so nobody has been notified: the cache must not answer.
        ApiKey.objects.update(revoked_at=timezone.now())
        with pytest.raises(AuthenticationFailed, match="revoked"):
            ApiKeyAuthenticator().authenticate(token)
        transaction.set_rollback(True)
    assert not refused(token)


@pytest.mark.parametrize("write", ["service", "raw SQL", "expiry", "namespace deletion", "truncate"])
def test_every_write_path_invalidates(namespace, make_key, write):
    create_namespace(actor=SYSTEM, name="doomed")
    token = cached_token(make_key, namespace="doomed")
    key = ApiKey.objects.get(namespace__name="doomed")
    if write == "service":
        revoke_api_key(actor=SYSTEM, key_id=key.key_id)
        assert refused(token)  # this process evicted it at commit, without waiting for NOTIFY
    elif write == "raw SQL":
        with connection.cursor() as cursor:
            cursor.execute("UPDATE apikeys_apikey SET revoked_at = CURRENT_TIMESTAMP WHERE key_id = %s", [key.key_id])
    elif write == "expiry":
        ApiKey.objects.filter(pk=key.pk).update(expires_at=timezone.now() - timezone.timedelta(seconds=1))
    elif write == "namespace deletion":
        Namespace.objects.filter(name="doomed").delete()  # the keys go by cascade
    else:  # what pytest-django's flush does between transactional tests; SQLite has no TRUNCATE
        with connection.cursor() as cursor:
            cursor.execute(
                "TRUNCATE apikeys_apikey CASCADE" if connection.vendor == "postgresql" else "DELETE FROM apikeys_apikey"
            )
    # NOTIFY is asynchronous: the listener hears it within milliseconds, not at the commit.
    wait_for(lambda: refused(token), timeout=2.0)
    assert refused(token)


def test_writing_last_used_keeps_the_key_cached(namespace, make_key):
    # Every key in use has last_used written about once a minute: that alone announces nothing
    # (apikeys migration 0007). Any other change still is.
    token = cached_token(make_key)
    ApiKey.objects.update(last_used_at=timezone.now() - timezone.timedelta(hours=1))
    time.sleep(0.2)  # a NOTIFY, were one sent, would have arrived
    # SQLite has no cache: the lookup (this process wrote last_used within the window).
    expected = 0 if connection.vendor == "postgresql" else 1
    assert queries_of(lambda: ApiKeyAuthenticator().authenticate(token)) == expected
    ApiKey.objects.update(role=Role.ADMIN)
    wait_for(lambda: ApiKeyAuthenticator().authenticate(token).admin, timeout=2.0)


def test_unknown_keys_are_not_cached_and_the_size_is_bounded(namespace, make_key, settings):
    settings.API_KEY_CACHE_SIZE = 2
    tokens = [cached_token(make_key) for _ in range(3)]
    ApiKey.objects.all().delete()
    assert refused(make_key("team-a", Role.VIEWER)[:-10] + "0" * 10)  # malformed: no query at all
    cache = keycache.cache_for("default")
    if cache is None:
        assert connection.vendor == "sqlite"
        return
    wait_for(lambda: len(cache) == 0)
    unknown = tokens[0]  # well formed, its row deleted: refused, and not remembered
    assert refused(unknown)
    assert len(cache) == 0
    for token in [cached_token(make_key) for _ in range(3)]:
        assert not refused(token)
    assert len(cache) == 2


def test_listener_lost_means_no_cache_until_it_is_back(namespace, make_key):
    token = cached_token(make_key)
    cache = keycache.cache_for("default")
    if cache is None:
        assert connection.vendor == "sqlite"
        return
    assert len(cache) == 1
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s AND datname = %s",
            [keycache.listener_name(), connection.settings_dict["NAME"]],
        )
        assert cursor.fetchone() == (True,)
    wait_for(lambda: cache.connects == 2 or not cache.listening)
    assert len(cache) == 0  # flushed when the connection dropped
    # Revoked while the listener may be away (its NOTIFY then goes nowhere): still refused.
    with connection.cursor() as cursor:
        cursor.execute("UPDATE apikeys_apikey SET revoked_at = CURRENT_TIMESTAMP")
    assert refused(token)
    # Back with backoff; then a fresh key is served from the cache again.
    wait_for(lambda: cache.listening and cache.connects == 2)
    fresh = cached_token(make_key)
    assert queries_of(lambda: ApiKeyAuthenticator().authenticate(fresh)) == 0


def test_a_forked_child_starts_without_the_parents_cache(namespace, make_key):
    cached_token(make_key)
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through its exit status
        os._exit(0 if not keycache._caches else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert bool(keycache._caches) == (connection.vendor == "postgresql")
