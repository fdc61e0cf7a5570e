"""What the RPC runtime knows, handed to the request's observation and, when tracing, its span.

`RecordOutcome` is a metadata interceptor placed outermost (after tracing's) in
settings.RPC_INTERCEPTORS, so its on_end sees the Connect code every call ends with, whatever
inner interceptor or handler raised it, and the namespace of the decoded request (which
MapErrors notes on the call). It only copies a few values.
"""

from __future__ import annotations

from connectrpc.errors import ConnectError
from connectrpc.request import RequestContext
from opentelemetry import trace

from controlplane.observability import context as observed
from controlplane.observability import tracing

from . import context


class RecordOutcome:
    def on_start_sync(self, ctx: RequestContext) -> None:
        return None

    def on_end_sync(self, token, ctx: RequestContext, error: Exception | None) -> None:
        observation = observed.current()
        if observation is None:
            return
        if error is None:
            observation.code = "ok"
        else:
            observation.code = error.code.value if isinstance(error, ConnectError) else "unknown"
        call = context.bound_call(ctx)
        principal = call.principal if call is not None else None  # None: Authenticate refused the call
        observation.namespace = getattr(call and call.request, "namespace", "")  # None: never decoded
        observation.principal = principal.describe() if principal is not None else "anonymous"
        if tracing.enabled():
            _annotate_span(ctx, observation, principal)


def _annotate_span(ctx: RequestContext, observation, principal) -> None:
    """The attributes of the (older) RPC semantic conventions, beside connectrpc-otel's own."""
    span = trace.get_current_span()
    attributes = {"rpc.system": "connect_rpc", "rpc.service": ctx.method.service_name}
    if observation.code != "ok":
        attributes["rpc.connect_rpc.error_code"] = observation.code
    if principal is not None:
        attributes["controlplane.principal.kind"] = principal.kind.value  # never a key, its id or a cookie
    if observation.namespace:
        attributes["controlplane.namespace"] = observation.namespace
    span.set_attributes(attributes)
    context_ = span.get_span_context()
    if context_.is_valid:
        observation.trace_id = format(context_.trace_id, "032x")


def tracing_interceptors() -> tuple:
    """Outermost in RPC_INTERCEPTORS: the server span (connectrpc-otel), when tracing is on."""
    return tracing.server_interceptors()
