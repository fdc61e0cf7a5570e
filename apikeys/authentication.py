"""Authenticator for cpk_ API keys: token → principal, in one indexed query at most.

This runs on every API call. Resolved keys are kept in a per-process cache invalidated by
PostgreSQL NOTIFY (apikeys.keycache), so most calls make no query; otherwise the lookup
skips the ORM's per-call query building: its SQL is compiled once from the ORM (so it
follows the model) and then executed with the digest as its only parameter
(controlplane.precompiled).
"""

from __future__ import annotations

import hmac
import time
from datetime import datetime, timedelta
from functools import lru_cache
from typing import NamedTuple

from django.conf import settings
from django.db import connections, router
from django.utils import timezone

from controlplane.auth import Kind, Principal, Role
from controlplane.auth.exceptions import AuthenticationFailed
from controlplane.observability import metrics
from controlplane.precompiled import PrecompiledQuery

from . import keycache, tokens
from .models import ApiKey


class KeyRecord(NamedTuple):
    """What authentication needs of an API key row."""

    pk: int
    key_id: str
    digest: str
    role: int | None  # None for agent keys, which hold no role
    kind: str
    sandbox_id: str | None
    workspace_scope: str
    expires_at: datetime | None
    revoked_at: datetime | None
    last_used_at: datetime | None
    namespace_name: str


_COLUMNS = KeyRecord._fields


class ApiKeyAuthenticator:
    """A controlplane.auth.authenticators.BearerAuthenticator for tokens with the cpk_ prefix."""

    name = "api_key"  # the authenticator label of controlplane_authentications_total

    def accepts(self, token: str) -> bool:
        return token.startswith(tokens.PREFIX)

    def authenticate(self, token: str) -> Principal:
        digest = tokens.digest(token)
        cache = usable_cache()
        key = None
        if cache is not None:
            key = cache.get(digest)
            metrics.record_key_cache(key is not None)
        if key is None:
            # Only a key that resolved before passes the cache; anything else has its form
            # checked first, so a mistyped or made-up key costs no query.
            if not tokens.is_well_formed(token):
                raise AuthenticationFailed("malformed API key")
            key = looked_up_key(digest, cache)
        # The index or the cache finds the row; the comparison that decides is constant-time.
        if key is None or not hmac.compare_digest(key.digest, digest):
            raise AuthenticationFailed("unknown API key")
        now = timezone.now()
        if key.revoked_at is not None:
            raise AuthenticationFailed("API key has been revoked")
        if key.expires_at is not None and key.expires_at <= now:
            raise AuthenticationFailed("API key has expired")
        _touch(key, now)
        return principal_for_key(key)


# A single-table query on purpose: Django runs PostgreSQL without prepared statements,
# and planning a join costs more than executing it.
_BY_DIGEST = PrecompiledQuery(
    lambda digest: ApiKey.objects.filter(digest=digest).order_by().values_list(*_COLUMNS), "digest"
)


def find_key(digest: str) -> KeyRecord | None:
    rows = _BY_DIGEST.rows(router.db_for_read(ApiKey), digest=digest)
    return KeyRecord(*rows[0]) if rows else None


def usable_cache() -> keycache.KeyCache | None:
    """This process's key cache, when it may answer now."""
    alias = router.db_for_read(ApiKey)
    connection = connections[alias]
    # Inside a transaction the caller may hold uncommitted changes to keys that nobody has
    # been notified of: only the database's answer is right there.
    if connection.in_atomic_block:
        return None
    return keycache.cache_for(alias, connection)


def looked_up_key(digest: str, cache: keycache.KeyCache | None) -> KeyRecord | None:
    """find_key, remembered in `cache` (usable_cache()) if the key is active."""
    if cache is None:
        return find_key(digest)
    ticket = cache.ticket()  # before the read: an invalidation during it voids the entry
    key = find_key(digest)
    if key is not None and key.revoked_at is None:  # unknown keys are never cached
        cache.put(digest, key, ticket)
    return key


def principal_for_key(key: KeyRecord) -> Principal:
    return _principal(key.kind, key.key_id, key.role, key.namespace_name, key.workspace_scope, key.sandbox_id)


# Principals are frozen (roles a read-only mapping), so one per key serves every request:
# building it cost about half of a cached key's authentication.
@lru_cache(maxsize=4096)
def _principal(kind: str, key_id: str, role, namespace_name: str, workspace_scope: str, sandbox_id) -> Principal:
    if kind == ApiKey.Kind.RUNNER:
        # No roles and not admin: only the runner API admits it (controlplane.rpc.RunnerOnly).
        return Principal(kind=Kind.RUNNER, key_id=key_id, display_name=key_id, via="bearer")
    if kind == ApiKey.Kind.AGENT:
        # No namespace roles: every NamespaceRole check refuses an agent. Only the
        # permissions that look at workspace_scope / sandbox_id let it through.
        return Principal(
            kind=Kind.AGENT,
            key_id=key_id,
            display_name=key_id,
            workspace_scope=workspace_scope or None,
            sandbox_id=sandbox_id,
            via="bearer",
        )
    role = Role(role)
    return Principal(
        kind=Kind.API_KEY,
        roles={namespace_name: role},
        admin=role is Role.ADMIN,
        key_id=key_id,
        display_name=key_id,
        via="bearer",
    )


_touched: dict[str, float] = {}  # key_id → when this process last wrote its last_used (monotonic)


def _touch(key: KeyRecord, now) -> None:
    """Writes last_used at most once per resolution window, not on every request: the row's
    own value decides (a key just used elsewhere is not written), and so does this process's
    memo, since a cached record keeps the last_used_at it was read with (writing only
    last_used_at does not evict it: apikeys migration 0007)."""
    seconds = settings.API_KEY_LAST_USED_RESOLUTION_SECONDS
    window = timedelta(seconds=seconds)
    if key.last_used_at is not None and now - key.last_used_at < window:
        return
    monotonic = time.monotonic()
    if monotonic - _touched.get(key.key_id, float("-inf")) < seconds:
        return
    if len(_touched) >= settings.API_KEY_CACHE_SIZE:
        _touched.clear()
    _touched[key.key_id] = monotonic
    # The filter makes concurrent requests race to a single write.
    stale = ApiKey.objects.filter(pk=key.pk, last_used_at__isnull=True) | ApiKey.objects.filter(
        pk=key.pk, last_used_at__lt=now - window
    )
    stale.update(last_used_at=now)
