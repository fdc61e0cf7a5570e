"""Service errors on the wire: `to_connect_error` is the only place an exception becomes a
Connect error; the connectrpc runtime then encodes it for whichever protocol the call used
(Connect JSON, gRPC-Web and gRPC trailers)."""

from __future__ import annotations

import logging
from functools import cache

from connectrpc._protocol import ConnectWireError
from connectrpc.code import Code as WireCode
from connectrpc.errors import ConnectError, ErrorDetail
from django.http import HttpResponse
from google.protobuf.message import Message
from protobuf import Registry
from protobuf.wkt import Any

from controlplane.errors import Error

logger = logging.getLogger("controlplane.rpc")


def to_connect_error(exc: Exception, procedure: str = "") -> ConnectError:
    """Any exception raised while serving `procedure` → the Connect error the caller sees.

    Service errors keep their code, message and details; anything unexpected is logged with
    its traceback and answered `internal` with nothing of its text (it may hold secrets).
    """
    if isinstance(exc, ConnectError):
        return exc
    if isinstance(exc, Error):
        return ConnectError(WireCode(exc.code.wire_name), exc.message, [_Detail(d) for d in exc.details])
    logger.error("unhandled error in /%s", procedure, exc_info=exc)
    return ConnectError(WireCode.INTERNAL, "internal error")


def error_response(exc: Exception) -> HttpResponse:
    """The Connect error body the runtime writes, for the few routes outside it (/auth/*)."""
    wire = ConnectWireError.from_exception(to_connect_error(exc))
    return HttpResponse(wire.to_json_bytes(), status=wire.to_http_status().code, content_type="application/json")


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
