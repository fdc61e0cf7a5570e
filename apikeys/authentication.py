"""Authenticator for cpk_ API keys: token → principal, in one indexed query."""

from __future__ import annotations

import hmac
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from controlplane.auth import Kind, Principal, Role
from controlplane.auth.authenticators import AuthenticationFailed

from . import tokens
from .models import ApiKey


class ApiKeyAuthenticator:
    def accepts(self, token: str) -> bool:
        return token.startswith(tokens.PREFIX)

    def authenticate(self, token: str) -> Principal:
        if not tokens.is_well_formed(token):
            raise AuthenticationFailed("malformed API key")
        digest = tokens.digest(token)
        key = (
            ApiKey.objects.select_related("namespace")
            .only(
                "id",
                "key_id",
                "digest",
                "role",
                "kind",
                "sandbox_id",
                "workspace_scope",
                "expires_at",
                "revoked_at",
                "last_used_at",
                "namespace__name",
            )
            .filter(digest=digest)
            .first()
        )
        # The index finds the row; the comparison that decides is constant-time.
        if key is None or not hmac.compare_digest(key.digest, digest):
            raise AuthenticationFailed("unknown API key")
        now = timezone.now()
        if key.revoked_at is not None:
            raise AuthenticationFailed("API key has been revoked")
        if key.expires_at is not None and key.expires_at <= now:
            raise AuthenticationFailed("API key has expired")
        _touch(key, now)
        return principal_for_key(key)


def principal_for_key(key: ApiKey) -> Principal:
    if key.kind == ApiKey.Kind.AGENT:
        # No namespace roles: every NamespaceRole check refuses an agent. Only the
        # permissions that look at workspace_scope / sandbox_id let it through.
        return Principal(
            kind=Kind.AGENT,
            key_id=key.key_id,
            display_name=key.key_id,
            workspace_scope=key.workspace_scope or None,
            sandbox_id=key.sandbox_id,
            via="bearer",
        )
    role = Role(key.role)
    return Principal(
        kind=Kind.API_KEY,
        roles={key.namespace.name: role},
        admin=role is Role.ADMIN,
        key_id=key.key_id,
        display_name=key.key_id,
        via="bearer",
    )


def _touch(key: ApiKey, now) -> None:
    """Writes last_used at most once per resolution window, not on every request."""
    window = timedelta(seconds=settings.API_KEY_LAST_USED_RESOLUTION_SECONDS)
    if key.last_used_at is not None and now - key.last_used_at < window:
        return
    # The filter makes concurrent requests race to a single write.
    stale = ApiKey.objects.filter(pk=key.pk, last_used_at__isnull=True) | ApiKey.objects.filter(
        pk=key.pk, last_used_at__lt=now - window
    )
    stale.update(last_used_at=now)
