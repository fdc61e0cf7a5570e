"""The one error type of the platform: what a service refuses, and why.

Service functions (used by RPC handlers, the admin and manage.py alike) raise `Error` with a
Connect status code; it is written on the wire in one place (controlplane.connect_errors), and
manage.py commands turn it into a CommandError once (controlplane.commands.service_errors).
An error carries the response headers it needs (`meta`, as connect-go's Error.Meta()), such as
Retry-After, so no other channel has to bring them to the response.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum

from google.protobuf.message import Message
from google.rpc import error_details_pb2


class Code(Enum):
    CANCELED = ("canceled", 499)
    UNKNOWN = ("unknown", 500)
    INVALID_ARGUMENT = ("invalid_argument", 400)
    DEADLINE_EXCEEDED = ("deadline_exceeded", 504)
    NOT_FOUND = ("not_found", 404)
    ALREADY_EXISTS = ("already_exists", 409)
    PERMISSION_DENIED = ("permission_denied", 403)
    RESOURCE_EXHAUSTED = ("resource_exhausted", 429)
    FAILED_PRECONDITION = ("failed_precondition", 400)
    ABORTED = ("aborted", 409)
    OUT_OF_RANGE = ("out_of_range", 400)
    UNIMPLEMENTED = ("unimplemented", 501)
    INTERNAL = ("internal", 500)
    UNAVAILABLE = ("unavailable", 503)
    DATA_LOSS = ("data_loss", 500)
    UNAUTHENTICATED = ("unauthenticated", 401)

    def __init__(self, wire_name: str, http_status: int):
        self.wire_name = wire_name
        self.http_status = http_status

    def __str__(self) -> str:
        return self.wire_name


class Error(Exception):
    def __init__(
        self,
        code: Code,
        message: str,
        details: tuple[Message, ...] = (),
        *,
        retry_after: int | None = None,
        meta: Mapping[str, str] | None = None,
    ):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = tuple(details)
        self.meta = dict(meta or {})  # response headers sent with the error
        if retry_after is not None:
            self.meta["Retry-After"] = str(retry_after)

    @property
    def retry_after(self) -> int | None:
        """Seconds the client should wait before retrying (the Retry-After header), if any."""
        value = self.meta.get("Retry-After")
        return None if value is None else int(value)

    def __repr__(self) -> str:
        return f"Error({self.code.wire_name}, {self.message!r})"

    # Constructors named after the codes, so call sites read like Connect's table of codes.
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
    def unavailable(cls, message: str, *, retry_after: int | None = None) -> Error:
        return cls(Code.UNAVAILABLE, message, retry_after=retry_after)

    @classmethod
    def internal(cls, message: str = "internal error") -> Error:
        return cls(Code.INTERNAL, message)
