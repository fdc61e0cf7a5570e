"""Scrape-time metrics of the workloads (settings.METRICS_COLLECTORS)."""

from __future__ import annotations

from prometheus_client.core import GaugeMetricFamily

from controlplane.observability.collectors import CachedCollector

from . import selectors
from .models import Job


class JobQueueCollector(CachedCollector):
    def sample(self) -> list:
        jobs = GaugeMetricFamily("controlplane_jobs", "Jobs by state, counted in the database.", labels=["state"])
        counts = selectors.job_counts_by_state()
        for state in Job.State.values:
            jobs.add_metric([state], counts.get(state, 0))
        return [jobs]
