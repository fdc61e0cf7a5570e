"""Reads of runners: keyset pages, newest first, with the work each holds."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from controlplane.errors import Error

from .models import Runner


def with_work_held(queryset: QuerySet) -> QuerySet:
    """Annotates `work_held`: the leases each runner holds now, counted in the same query."""
    from workloads.services.leases import KINDS  # the leased models name runners

    held = Value(0)
    for kind in KINDS:
        leases = kind.model.objects.filter(runner=OuterRef("pk"), lease_expires_at__isnull=False)
        count = leases.order_by().values("runner").annotate(n=Count("pk")).values("n")
        held = held + Coalesce(Subquery(count, output_field=IntegerField()), Value(0))
    return queryset.annotate(work_held=held)


def get(runner_id: str) -> Runner:
    runner = with_work_held(Runner.objects.select_related("key")).filter(runner_id=runner_id).first()
    if runner is None:
        raise Error.not_found(f"runner {runner_id!r} not found")
    return runner


def page(*, after: list | None = None, limit: int = 100) -> list[Runner]:
    queryset = with_work_held(Runner.objects.select_related("key")).order_by("-created_at", "-runner_id")
    if after is not None:
        try:
            at, tie = datetime.fromisoformat(after[0]), after[1]
            if at.tzinfo is None or not isinstance(tie, str):
                raise ValueError
        except (TypeError, ValueError, IndexError):
            raise Error.invalid_argument("pageToken", "is not a valid page token for this list") from None
        queryset = queryset.filter(Q(created_at__lt=at) | Q(created_at=at, runner_id__lt=tie))
    return list(queryset[:limit])


def position_of(runner: Runner) -> list:
    return [runner.created_at.isoformat(), runner.runner_id]


def last_seen() -> list[tuple]:
    """(runner_id, last_seen_at, created_at, revoked_at) of every runner, for /metrics: a
    fleet is a bounded set, and revoked runners are only counted."""
    return list(Runner.objects.order_by().values_list("runner_id", "last_seen_at", "created_at", "key__revoked_at"))
