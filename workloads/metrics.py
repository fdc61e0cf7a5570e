"""Scrape-time metrics of the workloads (settings.METRICS_COLLECTORS)."""

from __future__ import annotations

from prometheus_client.core import GaugeMetricFamily

from controlplane.observability.collectors import CachedCollector

from . import selectors
from .models import Job
from .services.leases import KINDS


class JobQueueCollector(CachedCollector):
    def sample(self) -> list:
        jobs = GaugeMetricFamily("controlplane_jobs", "Jobs by state, counted in the database.", labels=["state"])
        counts = selectors.job_counts_by_state()
        for state in Job.State.values:
            jobs.add_metric([state], counts.get(state, 0))
        return [jobs]


class WorkCollector(CachedCollector):
    """The runners' work by kind (job, sandbox, build): waiting, and leased. One query."""

    def sample(self) -> list:
        queued = GaugeMetricFamily("controlplane_work_queued", "Work waiting for a runner, by kind.", labels=["kind"])
        held = GaugeMetricFamily("controlplane_leases_held", "Leases runners hold, by kind.", labels=["kind"])
        overdue = GaugeMetricFamily(
            "controlplane_leases_overdue", "Held leases past their expiry, not reaped yet, by kind.", labels=["kind"]
        )
        counts = selectors.work_counts(KINDS)
        for kind in KINDS:
            count = counts[kind.label]
            queued.add_metric([kind.label], count.waiting)
            held.add_metric([kind.label], count.held)
            overdue.add_metric([kind.label], count.overdue)
        return [queued, held, overdue]
