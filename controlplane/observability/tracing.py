"""OpenTelemetry traces, off unless the standard OTEL_* environment variables ask for them.

On (`configured()`): OTEL_TRACES_EXPORTER names an exporter other than `none`, or
OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set; OTEL_SDK_DISABLED=true
wins over both. The SDK reads the rest itself: OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
OTEL_TRACES_SAMPLER(_ARG), OTEL_BSP_*, OTEL_EXPORTER_OTLP_* and OTEL_PROPAGATORS (W3C
traceparent by default).

Each RPC gets a server span from connectrpc-otel, the Connect runtime's own interceptor (it
extracts the caller's traceparent), with our attributes added by interceptors.py; SQL
statements (psycopg, sqlite3) and outgoing HTTP (requests: the OIDC provider) are child spans.
Off, none of this is installed: no interceptor, no wrapped driver.
"""

from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured
from opentelemetry import trace

_FALSE = ("", "none")
_state = {"enabled": False}


def configured(environ=os.environ) -> bool:
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = environ.get("OTEL_TRACES_EXPORTER")
    if exporters is not None:
        return exporters.strip().lower() not in _FALSE
    return bool(environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def enabled() -> bool:
    return _state["enabled"]


def setup(tracer_provider=None) -> bool:
    """Installs tracing once per process (each gunicorn worker: after the fork, as the SDK's
    export thread must be). `tracer_provider`: a ready one (tests); else from OTEL_*."""
    if _state["enabled"]:
        return True
    if tracer_provider is None:
        if not configured():
            return False
        tracer_provider = provider_from_environment()
        trace.set_tracer_provider(tracer_provider)
    _instrument(tracer_provider)
    _state["enabled"] = True
    _state["provider"] = tracer_provider
    _reset_rpc_chain()
    return True


def teardown() -> None:
    """Undoes `setup` (tests): the drivers unwrapped, the RPC chain rebuilt without tracing."""
    if not _state["enabled"]:
        return
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
    from opentelemetry.instrumentation.requests import RequestsInstrumentor
    from opentelemetry.instrumentation.sqlite3 import SQLite3Instrumentor

    for instrumentor in (PsycopgInstrumentor(), SQLite3Instrumentor(), RequestsInstrumentor()):
        instrumentor.uninstrument()
    # The psycopg instrumentation puts back `connect` as a method bound to the base class, so a
    # subclass's connect() would build base connections: put back the classmethods themselves.
    for cls, original in _state.get("psycopg_connect", {}).items():
        cls.connect = original
    _state.clear()
    _state["enabled"] = False
    _reset_rpc_chain()


def provider_from_environment():
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME") or "controlplane"})
    provider = TracerProvider(resource=resource)  # the sampler comes from OTEL_TRACES_SAMPLER
    for name in (os.environ.get("OTEL_TRACES_EXPORTER") or "otlp").split(","):
        if name.strip():
            provider.add_span_processor(BatchSpanProcessor(_exporter(name.strip().lower())))
    return provider


def _exporter(name: str):
    if name == "otlp":
        protocol = os.environ.get(
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
        )
        if protocol != "http/protobuf":
            raise ImproperlyConfigured(
                f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r}: only the http/protobuf exporter is installed; "
                "unset it or set http/protobuf"
            )
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter()
    if name == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter()
    # Any other exporter a package registers, as the SDK's own auto-configuration finds them.
    from opentelemetry.util._importlib_metadata import entry_points

    found = list(entry_points(group="opentelemetry_traces_exporter", name=name))
    if not found:
        raise ImproperlyConfigured(f"OTEL_TRACES_EXPORTER: no exporter named {name!r} is installed (otlp, console)")
    return found[0].load()()


def _instrument(tracer_provider) -> None:
    import psycopg
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
    from opentelemetry.instrumentation.requests import RequestsInstrumentor
    from opentelemetry.instrumentation.sqlite3 import SQLite3Instrumentor

    _state["psycopg_connect"] = {cls: cls.__dict__["connect"] for cls in (psycopg.Connection, psycopg.AsyncConnection)}
    PsycopgInstrumentor().instrument(tracer_provider=tracer_provider, skip_dep_check=True)
    SQLite3Instrumentor().instrument(tracer_provider=tracer_provider)
    RequestsInstrumentor().instrument(tracer_provider=tracer_provider)


def server_interceptors() -> tuple:
    """The RPC chain's tracing interceptor: connectrpc-otel's, when tracing is on."""
    if not _state["enabled"]:
        return ()
    from connectrpc_otel import OpenTelemetryInterceptor

    return (OpenTelemetryInterceptor(tracer_provider=_state["provider"]),)


def current_trace_id() -> str:
    """The current span's trace id (32 hex digits), or "" outside a sampled trace."""
    context = trace.get_current_span().get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else ""


_on_change: list = []


def on_change(callback) -> None:
    """Calls `callback()` whenever tracing is set up or torn down: the RPC registry rebuilds its
    interceptor chain (with or without the server span) without observability importing it."""
    _on_change.append(callback)


def _reset_rpc_chain() -> None:
    for callback in _on_change:
        callback()
