"""What a handler knows about its call besides the request message, reached from the runtime's
RequestContext: the principal and (JSON) the top-level fields the body named.

The Django view opens a `Call` for the HTTP request it hands to the runtime; the first
interceptor binds it to the RequestContext (see interceptors.Authenticate). The call's deadline
is not here: it is computed once where the request enters (controlplane.faults.arrival).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field

from connectrpc.request import RequestContext
from django.http import HttpRequest

from controlplane import lookups
from controlplane.auth import Principal


@dataclass(eq=False)
class Call:
    http_request: HttpRequest
    principal: Principal | None = None
    # Top-level JSON keys present in the body (None for binary), for full-replace updates.
    present_fields: set[str] | None = None
    # Responses whose encodings the handler prepared, by id(message) (see codecs.prepared).
    prepared: dict = field(default_factory=dict)
    # Server streams: authenticates and authorizes the caller again (interceptors.Authorize).
    recheck: Callable[[], None] | None = None
    # The decoded request message, once the runtime has read it (interceptors.MapErrors).
    request: object = None


_current: ContextVar[Call | None] = ContextVar("controlplane_rpc_call", default=None)
_ATTRIBUTE = "_controlplane_call"


@contextlib.contextmanager
def serving(http_request: HttpRequest):
    """The call of `http_request`, with its own memo of looked-up rows (controlplane.lookups)."""
    call = Call(http_request)
    token = _current.set(call)
    try:
        with lookups.per_call():
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


def bound_call(ctx: RequestContext) -> Call | None:
    """The call Authenticate bound to `ctx`, if it got that far. Unlike current_call(), also
    while a server stream is being sent, after the view has returned."""
    return getattr(ctx, _ATTRIBUTE, None)


def principal_of(ctx: RequestContext) -> Principal:
    return call_of(ctx).principal


def present_fields(ctx: RequestContext) -> set[str] | None:
    return call_of(ctx).present_fields
