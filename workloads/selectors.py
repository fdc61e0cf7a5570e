"""Reads of containers resources: by public id, and keyset pages per namespace (newest first)."""

from __future__ import annotations

import functools
from datetime import datetime
from typing import NamedTuple

from django.db import connections, router
from django.db.models import Count, Model, Q, Subquery, Value
from django.utils import timezone

from controlplane.errors import Error
from controlplane.lookups import looked_up
from controlplane.precompiled import PrecompiledQuery
from namespaces.models import Namespace

from .models import EgressEvent, EgressGrant, Environment, Job, JobLogChunk, Sandbox, Workspace


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
    """The resource with its related rows, once per call (controlplane.lookups).

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

    A position of another shape is invalid_argument naming pageToken (a token of an older version).
    One statement, compiled once per list, limit and kind of page; an empty page also looks the
    namespace up (not_found)."""
    alias = router.db_for_read(model)
    values = {"namespace": namespace}
    if after is not None:
        at, tie = _position(after, int if KEYSETS[model][1] == "id" else str)
        values.update(at=connections[alias].ops.adapt_datetimefield_value(at), tie=tie)
    rows = _page_query(model, after is not None, limit).objects(alias, **values)
    if not rows and not _NAMESPACE_ID.rows(alias, name=namespace):
        raise Error.not_found(f"namespace {namespace!r} not found")
    return rows


_NAMESPACE_ID = PrecompiledQuery(lambda name: Namespace.objects.filter(name=name).values_list("pk").order_by(), "name")


@functools.lru_cache(maxsize=256)  # lists x {first, later} x the page sizes clients ask for
def _page_query(model: type[Model], later: bool, limit: int) -> PrecompiledQuery:
    time_field, tie_field = KEYSETS[model]

    def build(namespace, at=None, tie=None):
        # The namespace's id from a subquery on its name, not a join: the keyset index on
        # (namespace_id, time, tie) then serves the whole order. The position's values go in
        # as Value()s, so their compile-time marks reach the SQL parameters unconverted.
        queryset = model.objects.select_related(*_related(model)).filter(
            namespace_id=Subquery(Namespace.objects.filter(name=namespace).order_by().values("pk"))
        )
        if later:
            # (time, tie) < (at, tie), spelt so that `time <= at` bounds the index scan: a page
            # deep in the list starts where it starts, instead of filtering every row before it.
            at, tie = Value(at), Value(tie)
            queryset = queryset.filter(
                Q(**{f"{time_field}__lte": at}) & (Q(**{f"{time_field}__lt": at}) | Q(**{f"{tie_field}__lt": tie}))
            )
        return queryset.order_by(f"-{time_field}", f"-{tie_field}")[:limit]

    return PrecompiledQuery(build, "namespace", "at", "tie") if later else PrecompiledQuery(build, "namespace")


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


MAX_LOG_READ = 1024 * 1024  # bytes per GetJobLogs


class LogPage(NamedTuple):
    data: bytes
    next_offset: int
    first_offset: int
    complete: bool


def job_logs(job: Job, offset: int) -> LogPage:
    """Up to MAX_LOG_READ bytes of the job's output from `offset` (or from the oldest byte kept)."""
    if offset < 0 or offset > job.log_size:
        raise Error.invalid_argument("offset", f"must be 0..{job.log_size} (the log's size), got {offset}")
    start = max(offset, job.log_start)
    stop = min(job.log_size, start + MAX_LOG_READ)
    # Chunks are at most 1 MiB (AppendLogs), so the one holding `start` begins within that.
    chunks = JobLogChunk.objects.filter(job=job, offset__lt=stop, offset__gte=start - MAX_LOG_READ).order_by("offset")
    pieces = []
    for chunk_offset, data in chunks.values_list("offset", "data"):
        data = bytes(data)
        begin, end = max(start, chunk_offset), min(stop, chunk_offset + len(data))
        if begin < end:
            pieces.append(data[begin - chunk_offset : end - chunk_offset])
    data = b"".join(pieces)
    if stop < job.log_size:
        data = _whole_characters(data)
    next_offset = start + len(data)
    complete = job.state not in Job.ACTIVE_STATES and next_offset == job.log_size
    return LogPage(data, next_offset, job.log_start, complete)


def _whole_characters(data: bytes) -> bytes:
    """Drops a UTF-8 sequence cut at the end of a page, so that the next page starts with it."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return data
        if byte >= 0xC0:  # a lead byte: is its sequence whole?
            length = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return data if back >= length else data[:-back]
    return data


def job_counts_by_state() -> dict[str, int]:
    """How many jobs are in each state, across namespaces (the work queue, for /metrics)."""
    return dict(Job.objects.order_by().values_list("state").annotate(count=Count("pk")))


class WorkCounts(NamedTuple):
    waiting: int  # for a runner: what AcquireWork would hand out
    held: int  # leases (lease_expires_at set, as everywhere), including...
    overdue: int  # ...those expired and not reaped yet


def work_counts(kinds) -> dict[str, WorkCounts]:
    """Per kind of leased work (workloads.services.leases.KINDS, by label), for /metrics.

    One statement: a UNION ALL of one aggregate per table, over its live rows only (the
    state indexes find them; a lease is only ever held on work in such a state)."""
    now = timezone.now()
    parts = [
        kind.model.objects.order_by()
        .filter(state__in=getattr(kind.model, "ACTIVE_STATES", (kind.waiting,)))
        .annotate(kind=Value(kind.label))
        .values("kind")  # a constant: no GROUP BY, one row per table
        .annotate(
            waiting=Count("pk", filter=Q(state=kind.waiting, lease_expires_at__isnull=True)),
            held=Count("pk", filter=Q(lease_expires_at__isnull=False)),
            overdue=Count("pk", filter=Q(lease_expires_at__lte=now)),
        )
        .values_list("kind", "waiting", "held", "overdue")
        for kind in kinds
    ]
    first, *rest = parts
    return {label: WorkCounts(*counts) for label, *counts in first.union(*rest, all=True)}


_BY_PUBLIC_ID = {model: _by_public_id(model) for model in PUBLIC_IDS}
