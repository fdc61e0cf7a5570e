"""Writes to API keys. The RPC views, the admin and manage.py all call these."""

from __future__ import annotations

from datetime import datetime

from django.db import router, transaction
from django.utils import timezone

from audit.services import record
from controlplane.auth import Principal, Role
from controlplane.errors import Error
from idempotency.services import idempotent
from namespaces.models import Namespace
from namespaces.validation import validate_namespace_name, validate_role

from . import keycache, tokens
from .models import ApiKey

MAX_NAME_LENGTH = 200


def _already_issued(key_id: str):
    # The plaintext exists nowhere after the first response, so a retry cannot be answered
    # with it: it names the key instead, to be revoked if its plaintext was lost.
    raise Error.already_exists(
        f"this requestId already issued API key {key_id!r}; its plaintext is shown only once. "
        "If it was lost, revoke that key and issue another with a new requestId"
    )


@transaction.atomic
@idempotent("IssueApiKey", reference=lambda issued: issued[0].key_id, replay=_already_issued)
def issue_api_key(
    *,
    actor: Principal,
    namespace: str,
    name: str,
    role: Role | int,
    expires_at: datetime | None = None,
) -> tuple[ApiKey, str]:
    """Issues a standard key and returns it with its plaintext, which exists nowhere else afterwards.

    Agent keys are not issued here: only the platform issues them, with their sandbox
    (`issue_agent_key`).
    """
    validate_namespace_name(namespace)
    name = _validate_name(name)
    role = validate_role(role)
    if expires_at is not None and expires_at <= timezone.now():
        raise Error.invalid_argument("expiresAt", "must be in the future")
    key, plaintext = _create(
        actor=actor, namespace=_namespace(namespace), name=name, role=int(role), expires_at=expires_at
    )
    _record_issue(actor, key, role=role.wire_name, expires_at=_iso(expires_at))
    return key, plaintext


@transaction.atomic
def issue_agent_key(
    *, actor: Principal, namespace: str, sandbox_id: str, workspace_scope: str = ""
) -> tuple[ApiKey, str]:
    """A sandbox agent's own key: no role, bound to its sandbox and, if any, one workspace.

    Called by the sandbox service when it creates the sandbox; the plaintext goes to the
    sandbox backend and nowhere else.
    """
    if not sandbox_id:
        raise ValueError("an agent key belongs to a sandbox")
    key, plaintext = _create(
        actor=actor,
        namespace=_namespace(namespace),
        name=f"agent of {sandbox_id}",
        kind=ApiKey.Kind.AGENT,
        sandbox_id=sandbox_id,
        workspace_scope=workspace_scope,
    )
    _record_issue(actor, key, sandbox_id=sandbox_id, workspace_scope=workspace_scope)
    return key, plaintext


@transaction.atomic
def issue_runner_key(*, actor: Principal, name: str) -> tuple[ApiKey, str]:
    """A runner's key: no role and no namespace; only the runner API admits it.

    Called by runners.services.issue_runner, which records what the runner may serve."""
    key, plaintext = _create(actor=actor, namespace=None, name=_validate_name(name), kind=ApiKey.Kind.RUNNER)
    _record_issue(actor, key)
    return key, plaintext


def _validate_name(name: str) -> str:
    name = (name or "").strip()
    if not name:
        raise Error.invalid_argument("name", "is required")
    if len(name) > MAX_NAME_LENGTH:
        raise Error.invalid_argument("name", f"must be at most {MAX_NAME_LENGTH} characters, got {len(name)}")
    return name


def _namespace(name: str) -> Namespace:
    try:
        return Namespace.objects.get(name=name)
    except Namespace.DoesNotExist:
        raise Error.not_found(f"namespace {name!r} not found") from None


def _create(*, actor: Principal, namespace: Namespace | None, **fields) -> tuple[ApiKey, str]:
    plaintext = tokens.generate()
    key = ApiKey.objects.create(
        key_id=tokens.new_key_id(),
        digest=tokens.digest(plaintext),
        hint=plaintext[-4:],
        namespace=namespace,
        namespace_name=namespace.name if namespace else "",
        created_by=actor.describe(),
        **fields,
    )
    return key, plaintext


def _record_issue(actor: Principal, key: ApiKey, **changes) -> None:
    record(
        actor=actor,
        action="api_key.issue",
        target=f"api_key:{key.key_id}",
        namespace=key.namespace_name,
        changes={"name": key.name, "kind": key.kind, **changes},
    )


@transaction.atomic
def revoke_api_key(*, actor: Principal, key_id: str) -> ApiKey:
    """Revokes a key; revoking a revoked key is a no-op that succeeds."""
    if not key_id:
        raise Error.invalid_argument("keyId", "is required")
    try:
        key = ApiKey.objects.select_for_update().get(key_id=key_id)
    except ApiKey.DoesNotExist:
        raise Error.not_found(f"API key {key_id!r} not found") from None
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
        # Once the revocation is visible, every process's key cache forgets the key before the
        # caller is answered (apikeys.keycache).
        transaction.on_commit(lambda: keycache.forget(key.digest, router.db_for_write(ApiKey)))
        record(actor=actor, action="api_key.revoke", target=f"api_key:{key.key_id}", namespace=key.namespace_name)
    return key


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None
