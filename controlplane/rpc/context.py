"""What a handler knows about its call besides the request message, reached from the runtime's
RequestContext: the principal, the deadline, and (JSON) the top-level fields the body named.

The Django view opens a `Call` for the HTTP request it hands to the runtime; the first
interceptor binds it to the RequestContext (see interceptors.Authenticate).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field

from connectrpc.request import RequestContext
from django.http import HttpRequest

from controlplane.auth import Principal
from controlplane.faults.arrival import ARRIVAL_KEY


@dataclass(eq=False)
class Call:
    http_request: HttpRequest
    principal: Principal | None = None
    # Top-level JSON keys present in the body (None for binary), for full-replace updates.
    present_fields: set[str] | None = None
    # When the view took the request (wall clock), to count the time it queued before.
    dispatched: float = field(default_factory=time.time)
    retry_after: int | None = None  # seconds, for the Retry-After header of an unavailable answer
    # Rows looked up during this call, by key (see `looked_up`).
    lookups: dict = field(default_factory=dict)
    # Responses whose encodings the handler prepared, by id(message) (see codecs.prepared).
    prepared: dict = field(default_factory=dict)
    # Server streams: authenticates and authorizes the caller again (interceptors.Authorize).
    recheck: Callable[[], None] | None = None


_current: ContextVar[Call | None] = ContextVar("controlplane_rpc_call", default=None)
_ATTRIBUTE = "_controlplane_call"


@contextlib.contextmanager
def serving(http_request: HttpRequest):
    call = Call(http_request)
    token = _current.set(call)
    try:
        yield call
    finally:
        _current.reset(token)


def current_call() -> Call:
    call = _current.get()
    if call is None:
        raise RuntimeError("RPCs are served through controlplane.rpc.views.dispatch")
    return call


def bind(ctx: RequestContext) -> Call:
    call = current_call()
    setattr(ctx, _ATTRIBUTE, call)
    return call


def call_of(ctx: RequestContext) -> Call:
    return getattr(ctx, _ATTRIBUTE)


def principal_of(ctx: RequestContext) -> Principal:
    return call_of(ctx).principal


def present_fields(ctx: RequestContext) -> set[str] | None:
    return call_of(ctx).present_fields


def call_deadline(ctx: RequestContext) -> float | None:
    """The call's deadline as a time.monotonic() value, from Connect-Timeout-Ms / grpc-timeout,
    counted from the request's arrival (controlplane.faults.arrival), so queueing counts.

    The runtime starts its clock when it reads the headers; the time the request waited
    before the view took it is taken off.
    """
    remaining_ms = ctx.timeout_ms
    if remaining_ms is None:
        return None
    call = call_of(ctx)
    arrived = call.http_request.META.get(ARRIVAL_KEY, call.dispatched)
    return time.monotonic() + remaining_ms / 1000 - max(0.0, call.dispatched - arrived)


def looked_up(key, load, *, reload: bool = False):
    """`load()` once per call: an authorizer's lookup of a resource and the handler's share the row.

    reload: load anyway and remember this row instead, e.g. one read with a lock, which an
    earlier unlocked copy must not stand in for (and which later plain lookups then share).
    Outside an RPC (commands, the console) it simply loads. A failed load is not remembered.
    """
    call = _current.get()
    if call is None:
        return load()
    if reload or key not in call.lookups:
        call.lookups[key] = load()
    return call.lookups[key]


def note_retry_after(seconds: int) -> None:
    """Asks the view to send Retry-After with the error being answered."""
    call = _current.get()
    if call is not None:
        call.retry_after = seconds
