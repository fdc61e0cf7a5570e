"""Load shedding, before authentication and before the body is read.

A request that has already outlived its Connect-Timeout-Ms (counted from arrival) is
answered `deadline_exceeded` without doing its work; one that waited in the queue longer
than SHED_QUEUE_MS is answered `unavailable` with Retry-After. Both cost the worker
well under a millisecond, so an overloaded server drains its queue instead of serving
calls whose clients have given up.
"""

from __future__ import annotations

import time

from django.conf import settings
from django.http import HttpResponse

from controlplane.connect_errors import error_response
from controlplane.errors import Error
from controlplane.observability import metrics

from .arrival import current_deadline, request_deadline, stamp

# Probes answer even under overload: a balancer must not mistake a busy server for a dead one;
# and a scrape then shows the overload.
EXEMPT_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})


class LoadSheddingMiddleware:
    """Where a request enters: stamps its arrival, computes its deadline once (read everywhere
    else through `arrival.current_deadline`), and refuses it when it is already too late."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        environ = request.META
        arrived = stamp(environ)
        deadline = request_deadline(environ)
        if request.path not in EXEMPT_PATHS:
            refusal = _refusal(arrived, deadline)
            if refusal is not None:
                return _unlogged(error_response(refusal))
        token = current_deadline.set(deadline)
        try:
            return self.get_response(request)
        finally:
            current_deadline.reset(token)


def _refusal(arrived: float, deadline: float | None) -> Error | None:
    if deadline is not None and time.monotonic() >= deadline:
        metrics.record_refusal("deadline")
        return Error.deadline_exceeded("the call's deadline (Connect-Timeout-Ms) elapsed before it was served")
    limit_ms = settings.SHED_QUEUE_MS
    waited_ms = (time.time() - arrived) * 1000
    if limit_ms and waited_ms > limit_ms:
        metrics.record_refusal("shed")
        return Error.unavailable(
            f"the service is overloaded: the call waited {waited_ms:.0f} ms in the queue (SHED_QUEUE_MS={limit_ms})",
            retry_after=1,
        )
    return None


def _unlogged(response: HttpResponse) -> HttpResponse:
    # Not one django.request ERROR line per refusal: under overload that is log volume and worker
    # time spent where neither can be afforded; the access log still shows every 503/504.
    response._has_been_logged = True
    return response
