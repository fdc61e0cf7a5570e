"""Reads of containers resources: by public id, and keyset pages per namespace (newest first)."""

from __future__ import annotations

from typing import NamedTuple

from django.db.models import Model

from controlplane.errors import Error
from namespaces.models import Namespace

from .models import EgressGrant, Environment, Job, Sandbox, Workspace


class PublicId(NamedTuple):
    field: str  # model and proto field
    json_name: str  # what clients send, for invalid_argument details
    what: str  # what messages call the resource


PUBLIC_IDS: dict[type[Model], PublicId] = {
    Job: PublicId("job_id", "jobId", "job"),
    Sandbox: PublicId("sandbox_id", "sandboxId", "sandbox"),
    Environment: PublicId("environment_id", "environmentId", "environment"),
    Workspace: PublicId("workspace_id", "workspaceId", "workspace"),
    EgressGrant: PublicId("grant_id", "grantId", "egress grant"),
}


def namespace_of(model: type[Model], public_id: str) -> str:
    """The namespace a resource lives in, for authorization; not_found if the id exists nowhere."""
    field, _, what = PUBLIC_IDS[model]
    name = model.objects.filter(**{field: public_id}).values_list("namespace__name", flat=True).first()
    if name is None:
        raise Error.not_found(f"{what} {public_id!r} not found")
    return name


def get(model: type[Model], public_id: str, *, for_update: bool = False):
    """The resource with its related rows; for_update also locks it until the transaction ends."""
    field, _, what = PUBLIC_IDS[model]
    queryset = model.objects.select_related(*_related(model))
    if for_update:
        queryset = queryset.select_for_update(of=("self",))
    resource = queryset.filter(**{field: public_id}).first()
    if resource is None:
        raise Error.not_found(f"{what} {public_id!r} not found")
    return resource


def page(model: type[Model], *, namespace: str, after: int | None = None, limit: int = 100) -> list:
    """Up to `limit` rows of the namespace with pk below `after`, newest first."""
    if not Namespace.objects.filter(name=namespace).exists():
        raise Error.not_found(f"namespace {namespace!r} not found")
    queryset = model.objects.select_related(*_related(model)).filter(namespace__name=namespace).order_by("-pk")
    if after is not None:
        queryset = queryset.filter(pk__lt=after)
    return list(queryset[:limit])


def _related(model: type[Model]) -> tuple[str, ...]:
    if model is Sandbox:
        return ("namespace", "workspace", "agent_key")
    return ("namespace",)
