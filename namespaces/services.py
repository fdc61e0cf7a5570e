"""Writes to namespaces. The RPC views, the admin and manage.py all call these.

Input is checked first (validation.py); every write runs in one transaction and is recorded
in the audit log.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from django.db import IntegrityError, transaction

from audit.services import record
from controlplane.auth import Principal, Role
from controlplane.errors import Error

from .models import QUOTA_FIELDS, GroupBinding, ImagePullSecret, InternalTarget, Namespace
from .validation import (
    Binding,
    PullSecret,
    Target,
    validate_bindings,
    validate_namespace_name,
    validate_pull_secrets,
    validate_quotas,
    validate_target,
    validate_targets,
)

UNCHANGED = object()


# ---- writes -------------------------------------------------------------------------------


@transaction.atomic
def create_namespace(
    *,
    actor: Principal,
    name: str,
    groups: Iterable[Binding] = (),
    internal_targets: Iterable[Target] = (),
    image_pull_secrets: Iterable[PullSecret] = (),
    quotas: Mapping[str, int | None] | None = None,
) -> Namespace:
    validate_namespace_name(name)
    groups = validate_bindings(groups)
    internal_targets = validate_targets(internal_targets)
    image_pull_secrets = validate_pull_secrets(image_pull_secrets)
    quotas = validate_quotas(quotas or {})
    if Namespace.objects.filter(name=name).exists():
        raise Error.already_exists(f"namespace {name!r} already exists")
    try:
        with transaction.atomic():
            namespace = Namespace.objects.create(name=name, **quotas)
    except IntegrityError:  # lost a race with a concurrent create
        raise Error.already_exists(f"namespace {name!r} already exists") from None
    _replace_bindings(namespace, groups)
    _replace_targets(namespace, internal_targets)
    _replace_pull_secrets(namespace, image_pull_secrets)
    record(
        actor=actor, action="namespace.create", target=f"namespace:{name}", namespace=name, changes=_snapshot(namespace)
    )
    return namespace


@transaction.atomic
def update_namespace(
    *,
    actor: Principal,
    name: str,
    groups: Iterable[Binding] | object = UNCHANGED,
    internal_targets: Iterable[Target] | object = UNCHANGED,
    image_pull_secrets: Iterable[PullSecret] | object = UNCHANGED,
    quotas: Mapping[str, int | None] | object = UNCHANGED,
) -> Namespace:
    """Each given list replaces the current one whole; UNCHANGED leaves it as it is."""
    validate_namespace_name(name)
    if groups is not UNCHANGED:
        groups = validate_bindings(groups)
    if internal_targets is not UNCHANGED:
        internal_targets = validate_targets(internal_targets)
    if image_pull_secrets is not UNCHANGED:
        image_pull_secrets = validate_pull_secrets(image_pull_secrets)
    if quotas is not UNCHANGED:
        quotas = validate_quotas(quotas)
    namespace = lock_namespace(name)
    before = _snapshot(namespace)
    if groups is not UNCHANGED:
        _replace_bindings(namespace, groups)
    if internal_targets is not UNCHANGED:
        _replace_targets(namespace, internal_targets)
    if image_pull_secrets is not UNCHANGED:
        _replace_pull_secrets(namespace, image_pull_secrets)
    if quotas is not UNCHANGED:
        for field, value in quotas.items():
            setattr(namespace, field, value)
    namespace.save()  # bumps updated_at even when only related rows changed
    after = _snapshot(namespace)
    changes = {key: {"from": before[key], "to": after[key]} for key in after if before[key] != after[key]}
    record(actor=actor, action="namespace.update", target=f"namespace:{name}", namespace=name, changes=changes)
    return namespace


def set_group_bindings(*, actor: Principal, name: str, groups: Iterable[Binding]) -> Namespace:
    return update_namespace(actor=actor, name=name, groups=groups)


@transaction.atomic
def register_internal_target(*, actor: Principal, namespace: str, target: Target) -> Namespace:
    validate_namespace_name(namespace)
    target = validate_target(target, "target")
    ns = lock_namespace(namespace)
    if ns.internal_targets.filter(name=target.name).exists():
        raise Error.already_exists(f"internal target {target.name!r} already exists in namespace {namespace!r}")
    InternalTarget.objects.create(namespace=ns, name=target.name, host=target.host, ports=list(target.ports))
    ns.save(update_fields=["updated_at"])
    record(
        actor=actor,
        action="namespace.register_internal_target",
        target=f"namespace:{namespace}",
        namespace=namespace,
        changes={"target": {"name": target.name, "host": target.host, "ports": list(target.ports)}},
    )
    return ns


def lock_namespace(name: str) -> Namespace:
    """Locks the namespace row until the transaction ends, so writes to one namespace (and the
    quota counts taken under the lock) serialise. SQLite has no row locks; its transactions start
    IMMEDIATE, which serialises all writers.

    FOR NO KEY UPDATE, not FOR UPDATE: writers still serialise on it, but rows that merely
    reference the namespace (a job's change-log event, inserted under the change log's counter
    lock by a runner's FinishWork) take only FOR KEY SHARE on it, and must not wait for a RunJob
    that holds this lock while it waits for that counter: a deadlock, seen under load."""
    validate_namespace_name(name)
    try:
        return Namespace.objects.select_for_update(no_key=True).get(name=name)
    except Namespace.DoesNotExist:
        raise Error.not_found(f"namespace {name!r} not found") from None


def _replace_bindings(namespace: Namespace, groups: list[Binding]) -> None:
    namespace.group_bindings.all().delete()
    GroupBinding.objects.bulk_create(
        GroupBinding(namespace=namespace, oidc_group=b.oidc_group, role=int(b.role)) for b in groups
    )


def _replace_targets(namespace: Namespace, targets: list[Target]) -> None:
    namespace.internal_targets.all().delete()
    InternalTarget.objects.bulk_create(
        InternalTarget(namespace=namespace, name=t.name, host=t.host, ports=list(t.ports)) for t in targets
    )


def _replace_pull_secrets(namespace: Namespace, secrets: list[PullSecret]) -> None:
    namespace.image_pull_secrets.all().delete()
    ImagePullSecret.objects.bulk_create(
        ImagePullSecret(namespace=namespace, registry=s.registry, secret_ref=s.secret_ref) for s in secrets
    )


def _snapshot(namespace: Namespace) -> dict:
    return {
        "groups": [[b.oidc_group, Role(b.role).wire_name] for b in namespace.group_bindings.order_by("oidc_group")],
        "internal_targets": [[t.name, t.host, t.ports] for t in namespace.internal_targets.order_by("name")],
        "image_pull_secrets": [[s.registry, s.secret_ref] for s in namespace.image_pull_secrets.order_by("registry")],
        "quotas": {field: getattr(namespace, field) for field in QUOTA_FIELDS},
    }
