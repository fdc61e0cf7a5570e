"""The one error type of the platform, and its one mapping to the wire.

Service functions (used by RPC handlers, the admin and manage.py alike) raise `Error`;
callers outside RPC read `.code` and `.message`. `to_connect_error` is the only place an
exception becomes a Connect error; the connectrpc runtime then encodes it for whichever
protocol the call used (Connect JSON, gRPC-Web trailers).
"""

from __future__ import annotations

import logging
from functools import cache

from connectrpc._protocol import ConnectWireError
from connectrpc.code import Code as WireCode
from connectrpc.errors import ConnectError, ErrorDetail
from django.http import HttpResponse
from google.protobuf.message import Message
from google.rpc import error_details_pb2
from protobuf import Registry
from protobuf.wkt import Any

from .codes import Code

logger = logging.getLogger("controlplane.rpc")


class Error(Exception):
    def __init__(self, code: Code, message: str, details: tuple[Message, ...] = ()):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = tuple(details)

    def __repr__(self) -> str:
        return f"Error({self.code.wire_name}, {self.message!r})"

    # Constructors named after the codes, so call sites read like the spec's error table.
    @classmethod
    def invalid_argument(cls, field: str, description: str) -> Error:
        """A bad request field: the message and a google.rpc.BadRequest detail name it."""
        violation = error_details_pb2.BadRequest.FieldViolation(field=field, description=description)
        return cls(
            Code.INVALID_ARGUMENT,
            f"{field}: {description}" if field else description,
            (error_details_pb2.BadRequest(field_violations=[violation]),),
        )

    @classmethod
    def not_found(cls, message: str) -> Error:
        return cls(Code.NOT_FOUND, message)

    @classmethod
    def already_exists(cls, message: str) -> Error:
        return cls(Code.ALREADY_EXISTS, message)

    @classmethod
    def permission_denied(cls, message: str) -> Error:
        return cls(Code.PERMISSION_DENIED, message)

    @classmethod
    def unauthenticated(cls, message: str) -> Error:
        return cls(Code.UNAUTHENTICATED, message)

    @classmethod
    def failed_precondition(cls, message: str) -> Error:
        return cls(Code.FAILED_PRECONDITION, message)

    @classmethod
    def resource_exhausted(cls, message: str, *, subject: str = "", description: str = "") -> Error:
        details = ()
        if subject:
            violation = error_details_pb2.QuotaFailure.Violation(subject=subject, description=description or message)
            details = (error_details_pb2.QuotaFailure(violations=[violation]),)
        return cls(Code.RESOURCE_EXHAUSTED, message, details)

    @classmethod
    def unimplemented(cls, message: str) -> Error:
        return cls(Code.UNIMPLEMENTED, message)

    @classmethod
    def deadline_exceeded(cls, message: str = "the call's deadline (Connect-Timeout-Ms) elapsed") -> Error:
        return cls(Code.DEADLINE_EXCEEDED, message)

    @classmethod
    def internal(cls, message: str = "internal error") -> Error:
        return cls(Code.INTERNAL, message)


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
