"""The request being observed, for whatever runs inside it (the RPC layer, log filters):
one context variable, set by requests.ObservabilityMiddleware to its requests.Observation."""

from __future__ import annotations

from contextvars import ContextVar

observation: ContextVar = ContextVar("controlplane_observation", default=None)


def current():
    """The current request's requests.Observation, or None outside one."""
    return observation.get()
