"""The one error type of the platform: services raise it, the RPC layer serialises it.

Service functions (used by RPC views, the admin and manage.py alike) raise `Error`;
callers outside RPC read `.code` and `.message`.
"""

import base64

from google.protobuf import json_format
from google.protobuf.message import Message
from google.rpc import error_details_pb2

from .codes import Code


class Error(Exception):
    def __init__(self, code: Code, message: str, details: tuple[Message, ...] = (), *, retry_after: int | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = tuple(details)
        self.retry_after = retry_after  # seconds, sent as Retry-After (unavailable)

    def __repr__(self) -> str:
        return f"Error({self.code.wire_name}, {self.message!r})"

    def to_json(self) -> dict:
        body = {"code": self.code.wire_name, "message": self.message}
        if self.details:
            body["details"] = [_detail_json(d) for d in self.details]
        return body

    # Constructors named after the codes, so call sites read like the spec's error table.
    @classmethod
    def invalid_argument(cls, field: str, description: str) -> "Error":
        """A bad request field: the message and a google.rpc.BadRequest detail name it."""
        violation = error_details_pb2.BadRequest.FieldViolation(field=field, description=description)
        return cls(
            Code.INVALID_ARGUMENT,
            f"{field}: {description}" if field else description,
            (error_details_pb2.BadRequest(field_violations=[violation]),),
        )

    @classmethod
    def not_found(cls, message: str) -> "Error":
        return cls(Code.NOT_FOUND, message)

    @classmethod
    def already_exists(cls, message: str) -> "Error":
        return cls(Code.ALREADY_EXISTS, message)

    @classmethod
    def permission_denied(cls, message: str) -> "Error":
        return cls(Code.PERMISSION_DENIED, message)

    @classmethod
    def unauthenticated(cls, message: str) -> "Error":
        return cls(Code.UNAUTHENTICATED, message)

    @classmethod
    def failed_precondition(cls, message: str) -> "Error":
        return cls(Code.FAILED_PRECONDITION, message)

    @classmethod
    def resource_exhausted(cls, message: str, *, subject: str = "", description: str = "") -> "Error":
        details = ()
        if subject:
            violation = error_details_pb2.QuotaFailure.Violation(subject=subject, description=description or message)
            details = (error_details_pb2.QuotaFailure(violations=[violation]),)
        return cls(Code.RESOURCE_EXHAUSTED, message, details)

    @classmethod
    def unimplemented(cls, message: str) -> "Error":
        return cls(Code.UNIMPLEMENTED, message)

    @classmethod
    def deadline_exceeded(cls, message: str = "the call's deadline (Connect-Timeout-Ms) elapsed") -> "Error":
        return cls(Code.DEADLINE_EXCEEDED, message)

    @classmethod
    def unavailable(cls, message: str, *, retry_after: int | None = None) -> "Error":
        return cls(Code.UNAVAILABLE, message, retry_after=retry_after)

    @classmethod
    def internal(cls, message: str = "internal error") -> "Error":
        return cls(Code.INTERNAL, message)


def _detail_json(detail: Message) -> dict:
    # Connect's error detail: type name, unpadded base64 of the binary message, and a JSON debug view.
    return {
        "type": detail.DESCRIPTOR.full_name,
        "value": base64.b64encode(detail.SerializeToString()).decode().rstrip("="),
        "debug": json_format.MessageToDict(detail),
    }
