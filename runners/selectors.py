"""Reads of runners: keyset pages, newest first, with the work each holds."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q

from controlplane.errors import Error

from .models import Runner


def page(*, after: list | None = None, limit: int = 100) -> list[Runner]:
    queryset = Runner.objects.select_related("key").order_by("-created_at", "-runner_id")
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


def work_held(runners: list[Runner]) -> dict[int, int]:
    """Runner pk → leases it holds now (one query per kind of work, not per runner)."""
    from workloads.services.leases import held_counts

    return held_counts([runner.pk for runner in runners])
