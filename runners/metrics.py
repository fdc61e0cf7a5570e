"""The runners' metrics: their last call, read at scrape time (settings.METRICS_COLLECTORS),
and the heartbeats answered, counted as they are."""

from __future__ import annotations

from functools import wraps

from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily

from controlplane.errors import Code, Error
from controlplane.observability.collectors import CachedCollector
from controlplane.observability.metrics import record_heartbeat

from . import selectors


class RunnerCollector(CachedCollector):
    """One query: every runner's id, last call and whether it is revoked."""

    def sample(self) -> list:
        runners = GaugeMetricFamily("controlplane_runners", "Runners, by state (active, revoked).", labels=["state"])
        age = GaugeMetricFamily(
            "controlplane_runner_last_seen_age_seconds",
            "Seconds since each active runner's last call (since it was issued, if it never called).",
            labels=["runner"],
        )
        now = timezone.now()
        active = revoked = 0
        for runner_id, last_seen_at, created_at, revoked_at in selectors.last_seen():
            if revoked_at is not None:
                revoked += 1
                continue
            active += 1
            # Never seen: counted from its issue, so a runner that never came up alerts too.
            age.add_metric([runner_id], max(0.0, (now - (last_seen_at or created_at)).total_seconds()))
        runners.add_metric(["active"], active)
        runners.add_metric(["revoked"], revoked)
        return [runners, age]


def counts_heartbeats(handler):
    """Counts what a Heartbeat handler answers: ok, or not_held (failed_precondition)."""

    @wraps(handler)
    def counted(self, request, ctx):
        try:
            response = handler(self, request, ctx)
        except Error as exc:
            if exc.code is Code.FAILED_PRECONDITION:
                record_heartbeat(held=False)
            raise
        record_heartbeat(held=True)
        return response

    return counted
