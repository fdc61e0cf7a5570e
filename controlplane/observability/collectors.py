"""Values read at scrape time (settings.METRICS_COLLECTORS), such as the work queued in the
database: one cheap query per scrape at most, its answer kept for METRICS_QUERY_CACHE_SECONDS,
so several Prometheus servers (or a dashboard refresh) do not multiply the queries.

A collector subclasses `CachedCollector` and implements `sample()`; it is listed in
METRICS_COLLECTORS by dotted path: jobs by state, the runners' work and leases, the runners.
"""

from __future__ import annotations

import logging
import threading
import time
from functools import cache

from django.conf import settings
from django.utils.module_loading import import_string

logger = logging.getLogger("controlplane.observability")


class CachedCollector:
    """A prometheus_client custom collector whose samples are computed at most every few seconds."""

    def __init__(self):
        self._lock = threading.Lock()
        self._families: list = []
        self._taken = float("-inf")

    def sample(self) -> list:
        """The metric families (prometheus_client.core.*MetricFamily), read now."""
        raise NotImplementedError

    def collect(self):
        with self._lock:
            if time.monotonic() - self._taken >= settings.METRICS_QUERY_CACHE_SECONDS:
                try:
                    self._families = self.sample()
                except Exception as exc:  # the scrape still answers; up/absent() tells the story
                    logger.warning("%s failed: %s", type(self).__name__, type(exc).__name__)
                    self._families = []
                self._taken = time.monotonic()
            return list(self._families)


@cache
def scrape_time_collectors() -> tuple:
    return tuple(import_string(path)() for path in settings.METRICS_COLLECTORS)
