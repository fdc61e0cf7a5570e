"""Writes to runners: issue and revoke. The RPC views, the console and manage.py call these."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction

from apikeys.services import issue_runner_key, revoke_api_key
from audit.services import record
from controlplane.auth import Principal
from controlplane.errors import Error
from namespaces.models import Namespace
from workloads.ids import new_id

from .models import Runner

MAX_NAMESPACES = 100


@transaction.atomic
def issue_runner(*, actor: Principal, name: str, namespaces: Sequence[str] = ()) -> tuple[Runner, str]:
    """A runner and its key's plaintext, which exists nowhere else afterwards.

    `namespaces`: the only ones whose work it may acquire (each must exist); empty: all."""
    if len(namespaces) > MAX_NAMESPACES:
        raise Error.invalid_argument("namespaces", f"at most {MAX_NAMESPACES}, got {len(namespaces)}")
    known = set(Namespace.objects.filter(name__in=namespaces).values_list("name", flat=True))
    for i, namespace in enumerate(namespaces):
        if namespace not in known:
            raise Error.invalid_argument(f"namespaces[{i}]", f"namespace {namespace!r} does not exist")
    namespaces = sorted(set(namespaces))
    key, plaintext = issue_runner_key(actor=actor, name=name)
    runner = Runner.objects.create(
        runner_id=new_id("rnr"), name=key.name, key=key, namespaces=namespaces, created_by=actor.describe()
    )
    record(
        actor=actor,
        action="runner.issue",
        target=f"runner:{runner.runner_id}",
        changes={"name": runner.name, "namespaces": namespaces, "key_id": key.key_id},
    )
    return runner, plaintext


@transaction.atomic
def revoke_runner(*, actor: Principal, runner_id: str) -> Runner:
    """Revokes the runner's key (refused at once everywhere) and ends its leases as if they had
    expired. Revoking a revoked runner is a no-op that succeeds."""
    from workloads.services.leases import lose_all_of  # workloads' leases name runners

    if not runner_id:
        raise Error.invalid_argument("runnerId", "is required")
    runner = Runner.objects.select_related("key").filter(runner_id=runner_id).first()
    if runner is None:
        raise Error.not_found(f"runner {runner_id!r} not found")
    if runner.key.revoked_at is None:
        runner.key = revoke_api_key(actor=actor, key_id=runner.key.key_id)
        lost = lose_all_of(actor, runner, "runner revoked")
        record(actor=actor, action="runner.revoke", target=f"runner:{runner_id}", changes={"leases_ended": lost})
    return runner
