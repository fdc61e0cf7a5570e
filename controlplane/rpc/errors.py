"""Service errors on the wire: `to_connect_error` is the only place an exception becomes a
Connect error; the connectrpc runtime then encodes it for whichever protocol the call used
(Connect JSON, gRPC-Web and gRPC trailers)."""

from __future__ import annotations

import logging
import time
from functools import cache

from connectrpc._protocol import ConnectWireError
from connectrpc.code import Code as WireCode
from connectrpc.errors import ConnectError, ErrorDetail
from django.http import HttpResponse
from google.protobuf.message import Message
from protobuf import Registry
from protobuf.wkt import Any

from controlplane.errors import Error
from controlplane.faults.arrival import current_deadline
from controlplane.faults.database import unavailable_error
from controlplane.observability import metrics

from . import context

logger = logging.getLogger("controlplane.rpc")


def to_connect_error(exc: Exception, procedure: str = "") -> ConnectError:
    """Any exception raised while serving `procedure` → the Connect error the caller sees.

    Service errors keep their code, message and details; anything unexpected is logged with
    its traceback and answered `internal` with nothing of its text (it may hold secrets).
    """
    if isinstance(exc, ConnectError):
        return exc
    error = exc if isinstance(exc, Error) else _classify(exc, procedure)
    if error.retry_after is not None:
        context.note_retry_after(error.retry_after)
    return ConnectError(WireCode(error.code.wire_name), error.message, [_Detail(d) for d in error.details])


def _classify(exc: Exception, procedure: str) -> Error:
    """An exception that is not a service error: past the deadline, a database outage, or a bug."""
    deadline = current_deadline.get()
    if deadline is not None and time.monotonic() >= deadline:
        return Error.deadline_exceeded()
    outage = unavailable_error(exc)
    if outage is not None:
        metrics.record_database_unavailable()
        # The error's class only: driver messages can carry connection details.
        logger.info("database unavailable in /%s: %s", procedure, type(exc.__cause__ or exc).__name__)
        return outage
    logger.error("unhandled error in /%s", procedure, exc_info=exc)
    return Error.internal()


def error_response(exc: Exception) -> HttpResponse:
    """The Connect error body the runtime writes, for the few routes outside it (/auth/*)."""
    # Classified once, so an outage met outside the runtime carries Retry-After too.
    error = exc if isinstance(exc, ConnectError | Error) else _classify(exc, "")
    wire = ConnectWireError.from_exception(to_connect_error(error))
    response = HttpResponse(wire.to_json_bytes(), status=wire.to_http_status().code, content_type="application/json")
    if getattr(error, "retry_after", None) is not None:
        response["Retry-After"] = str(error.retry_after)
    return response


class _Detail(ErrorDetail):
    """A google.protobuf detail for the runtime, which speaks the protobuf-py message API.

    Packed by hand into protobuf-py's Any; `value()` decodes it through a registry built from
    the detail's own descriptor, so the runtime can write the JSON `debug` view that Connect
    error bodies carry (seed 001 §7).
    """

    def __init__(self, message: Message):
        self._file = message.DESCRIPTOR.file
        name = message.DESCRIPTOR.full_name
        super().__init__(Any(type_url=f"type.googleapis.com/{name}", value=message.SerializeToString()))

    def value(self, desc_or_registry=None):
        return super().value(desc_or_registry or _registry_of(self._file))


@cache
def _registry_of(file) -> Registry:
    from .reflection import registry_for

    return registry_for(file)
