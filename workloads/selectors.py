"""Reads of containers resources: by public id, and keyset pages per namespace (newest first)."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from django.db import router
from django.db.models import Model, Q

from controlplane.errors import Error
from controlplane.precompiled import PrecompiledQuery
from controlplane.rpc import looked_up
from namespaces.models import Namespace

from .models import EgressEvent, EgressGrant, Environment, Job, Sandbox, Workspace


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
    """The namespace a resource lives in, for authorization; not_found if the id exists nowhere.

    The row is looked up whole and kept for the call, so the handler's `get` reuses it."""
    return get(model, public_id).namespace.name


def get(model: type[Model], public_id: str, *, for_update: bool = False):
    """The resource with its related rows, once per call (rpc.context.looked_up).

    for_update always reads the row again and locks it until the transaction ends; the locked
    row then replaces any copy read earlier in the call."""
    return looked_up((model, public_id), lambda: _load(model, public_id, for_update), reload=for_update)


def _load(model: type[Model], public_id: str, for_update: bool):
    field, _, what = PUBLIC_IDS[model]
    if for_update:
        queryset = model.objects.select_related(*_related(model)).select_for_update(of=("self",))
        resource = queryset.filter(**{field: public_id}).first()
    else:  # a hot read: its SQL compiled once, planned once per connection
        found = _BY_PUBLIC_ID[model].objects(router.db_for_read(model), public_id=public_id)
        resource = found[0] if found else None
    if resource is None:
        raise Error.not_found(f"{what} {public_id!r} not found")
    return resource


def _by_public_id(model: type[Model]) -> PrecompiledQuery:
    field = PUBLIC_IDS[model].field  # unique: at most one row, no ORDER BY or LIMIT needed
    return PrecompiledQuery(
        lambda public_id: model.objects.select_related(*_related(model)).filter(**{field: public_id}).order_by(),
        "public_id",
    )


# Each list's own keyset, newest first: creation time, then the public id. Events have no
# public id and break ties by their row id, which never leaves the sealed page token.
KEYSETS: dict[type[Model], tuple[str, str]] = {
    **{model: ("created_at", public.field) for model, public in PUBLIC_IDS.items()},
    EgressEvent: ("at", "id"),
}


def position_of(row: Model) -> list:
    """Where the next page starts: the row's keyset values, as JSON."""
    time_field, tie_field = KEYSETS[type(row)]
    return [getattr(row, time_field).isoformat(), getattr(row, tie_field)]


def page(model: type[Model], *, namespace: str, after: list | None = None, limit: int = 100) -> list:
    """Up to `limit` rows of the namespace after the position `after` (see position_of), newest first.

    A position of another shape is invalid_argument naming pageToken (a token of an older version)."""
    namespace_id = Namespace.objects.filter(name=namespace).values_list("pk", flat=True).first()
    if namespace_id is None:
        raise Error.not_found(f"namespace {namespace!r} not found")
    time_field, tie_field = KEYSETS[model]
    # By the namespace's id, not a join on its name, so the keyset index serves the whole order.
    queryset = model.objects.select_related(*_related(model)).filter(namespace_id=namespace_id)
    queryset = queryset.order_by(f"-{time_field}", f"-{tie_field}")
    if after is not None:
        at, tie = _position(after, int if tie_field == "id" else str)
        queryset = queryset.filter(Q(**{f"{time_field}__lt": at}) | Q(**{time_field: at, f"{tie_field}__lt": tie}))
    return list(queryset[:limit])


def _position(after, tie_type) -> tuple[datetime, object]:
    try:
        at, tie = after
        at = datetime.fromisoformat(at)
        if at.tzinfo is None or not isinstance(tie, tie_type):
            raise ValueError
    except (TypeError, ValueError):
        raise Error.invalid_argument("pageToken", "is not a valid page token for this list") from None
    return at, tie


def _related(model: type[Model]) -> tuple[str, ...]:
    if model is Sandbox:
        return ("namespace", "workspace", "agent_key")
    return ("namespace",)


_BY_PUBLIC_ID = {model: _by_public_id(model) for model in PUBLIC_IDS}
