"""Writes to API keys. The RPC views, the admin and manage.py all call these."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from audit.services import record
from controlplane.auth import Principal, Role
from controlplane.rpc import Error
from namespaces.models import Namespace
from namespaces.services import validate_namespace_name, validate_role

from . import tokens
from .models import ApiKey

MAX_NAME_LENGTH = 200


@transaction.atomic
def issue_api_key(
    *,
    actor: Principal,
    namespace: str,
    name: str,
    role: Role | int,
    expires_at: datetime | None = None,
    kind: str = ApiKey.Kind.STANDARD,
) -> tuple[ApiKey, str]:
    """Creates a key and returns it with its plaintext, which exists nowhere else afterwards."""
    validate_namespace_name(namespace)
    name = (name or "").strip()
    if not name:
        raise Error.invalid_argument("name", "is required")
    if len(name) > MAX_NAME_LENGTH:
        raise Error.invalid_argument("name", f"must be at most {MAX_NAME_LENGTH} characters, got {len(name)}")
    role = validate_role(role)
    if expires_at is not None and expires_at <= timezone.now():
        raise Error.invalid_argument("expiresAt", "must be in the future")
    try:
        ns = Namespace.objects.get(name=namespace)
    except Namespace.DoesNotExist:
        raise Error.not_found(f"namespace {namespace!r} not found") from None
    plaintext = tokens.generate()
    key = ApiKey.objects.create(
        key_id=tokens.new_key_id(),
        digest=tokens.digest(plaintext),
        hint=plaintext[-4:],
        name=name,
        namespace=ns,
        role=int(role),
        kind=kind,
        expires_at=expires_at,
        created_by=actor.describe(),
    )
    record(
        actor=actor,
        action="api_key.issue",
        target=f"api_key:{key.key_id}",
        namespace=namespace,
        changes={"name": name, "role": role.wire_name, "kind": kind, "expires_at": _iso(expires_at)},
    )
    return key, plaintext


@transaction.atomic
def revoke_api_key(*, actor: Principal, key_id: str) -> ApiKey:
    """Revokes a key; revoking a revoked key is a no-op that succeeds."""
    if not key_id:
        raise Error.invalid_argument("keyId", "is required")
    try:
        key = ApiKey.objects.select_for_update().select_related("namespace").get(key_id=key_id)
    except ApiKey.DoesNotExist:
        raise Error.not_found(f"API key {key_id!r} not found") from None
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
        record(actor=actor, action="api_key.revoke", target=f"api_key:{key.key_id}", namespace=key.namespace.name)
    return key


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None
