"""A service `Error` in the Connect protocol: the one mapping to the runtime's ConnectError, and the
one HTTP rendering of it for the routes the runtime does not serve (/auth/*, load shedding).

Inside the runtime, connectrpc encodes the ConnectError for whichever protocol the call used
(Connect JSON, gRPC-Web, gRPC trailers); `error_response` writes the same Connect JSON body.
The error's `meta` (e.g. Retry-After) is sent as response headers on every path.
"""

from __future__ import annotations

from functools import cache

from connectrpc._protocol import ConnectWireError
from connectrpc.code import Code as WireCode
from connectrpc.errors import ConnectError, ErrorDetail
from django.http import HttpResponse
from google.protobuf.message import Message
from protobuf import Registry
from protobuf.wkt import Any

from controlplane.errors import Error
from controlplane.protobuf_registry import registry_for


def connect_error(error: Error) -> ConnectError:
    """The runtime's form of `error`: code, message and details (its meta travels as headers)."""
    return ConnectError(WireCode(error.code.wire_name), error.message, [_Detail(d) for d in error.details])


def error_response(error: Error | ConnectError) -> HttpResponse:
    """The Connect error body ({code, message, details}) with the HTTP status of its code and
    the error's headers: what the runtime answers, for a route outside it."""
    connect = error if isinstance(error, ConnectError) else connect_error(error)
    wire = ConnectWireError.from_exception(connect)
    response = HttpResponse(wire.to_json_bytes(), status=wire.to_http_status().code, content_type="application/json")
    for name, value in getattr(error, "meta", {}).items():
        response[name] = value
    return response


class _Detail(ErrorDetail):
    """A google.protobuf detail for the runtime, which speaks the protobuf-py message API.

    Packed by hand into protobuf-py's Any; `value()` decodes it through a registry built from
    the detail's own descriptor, so the runtime can write the JSON `debug` view of each detail
    that Connect error bodies carry beside the packed bytes.
    """

    def __init__(self, message: Message):
        self._file = message.DESCRIPTOR.file
        name = message.DESCRIPTOR.full_name
        super().__init__(Any(type_url=f"type.googleapis.com/{name}", value=message.SerializeToString()))

    def value(self, desc_or_registry=None):
        return super().value(desc_or_registry or _registry_of(self._file))


@cache
def _registry_of(file) -> Registry:
    return registry_for(file)
