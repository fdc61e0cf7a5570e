"""Typed exceptions, one per Connect code, carrying the message and the decoded details."""

from __future__ import annotations

from dataclasses import dataclass

from connectrpc.code import Code
from connectrpc.errors import ConnectError
from google.protobuf.message import Message
from google.rpc import error_details_pb2

# Detail types the server sends, decoded; others stay available as (type name, bytes).
_DETAIL_TYPES: dict[str, type[Message]] = {
    cls.DESCRIPTOR.full_name: cls
    for cls in (
        error_details_pb2.BadRequest,
        error_details_pb2.QuotaFailure,
        error_details_pb2.PreconditionFailure,
        error_details_pb2.ErrorInfo,
        error_details_pb2.RetryInfo,
        error_details_pb2.ResourceInfo,
    )
}


@dataclass(frozen=True)
class FieldViolation:
    field: str
    description: str


@dataclass(frozen=True)
class QuotaViolation:
    subject: str
    description: str


@dataclass(frozen=True)
class RawDetail:
    type_name: str
    value: bytes


class ConfigurationError(ValueError):
    """The client was set up wrongly (base URL, credential, namespace); no call was made.

    Never carries the credential: a message names what is wrong with it, not its value.
    """


class Error(Exception):
    """Base of every error the SDK raises for a failed call."""

    code: str = "unknown"

    def __init__(self, message: str, details: list[Message | RawDetail] | None = None):
        super().__init__(message)
        self.message = message
        self.details = list(details or [])

    @property
    def field_violations(self) -> list[FieldViolation]:
        """From google.rpc.BadRequest details: which request field broke which rule."""
        return [
            FieldViolation(v.field, v.description)
            for d in self.details
            if isinstance(d, error_details_pb2.BadRequest)
            for v in d.field_violations
        ]

    @property
    def quota_violations(self) -> list[QuotaViolation]:
        """From google.rpc.QuotaFailure details: e.g. subject `namespace:team-a/maxSandboxes`."""
        return [
            QuotaViolation(v.subject, v.description)
            for d in self.details
            if isinstance(d, error_details_pb2.QuotaFailure)
            for v in d.violations
        ]

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


def _error_class(name: str, code: Code, doc: str) -> type[Error]:
    return type(name, (Error,), {"code": code.value, "__doc__": doc, "__module__": __name__})


Canceled = _error_class("Canceled", Code.CANCELED, "The call was canceled.")
Unknown = _error_class("Unknown", Code.UNKNOWN, "An error of unclear origin.")
InvalidArgument = _error_class("InvalidArgument", Code.INVALID_ARGUMENT, "Bad input; see field_violations.")
DeadlineExceeded = _error_class("DeadlineExceeded", Code.DEADLINE_EXCEEDED, "The timeout elapsed.")
NotFound = _error_class("NotFound", Code.NOT_FOUND, "The named resource exists nowhere.")
AlreadyExists = _error_class("AlreadyExists", Code.ALREADY_EXISTS, "The resource already exists.")
PermissionDenied = _error_class(
    "PermissionDenied", Code.PERMISSION_DENIED, "Valid credential, but wrong namespace or insufficient role."
)
ResourceExhausted = _error_class(
    "ResourceExhausted", Code.RESOURCE_EXHAUSTED, "A quota or limit; see quota_violations."
)
FailedPrecondition = _error_class(
    "FailedPrecondition", Code.FAILED_PRECONDITION, "The system is not in the needed state."
)
Aborted = _error_class("Aborted", Code.ABORTED, "Aborted by a concurrent change.")
OutOfRange = _error_class("OutOfRange", Code.OUT_OF_RANGE, "Out of the valid range.")
Unimplemented = _error_class("Unimplemented", Code.UNIMPLEMENTED, "The capability is not configured here.")
Internal = _error_class("Internal", Code.INTERNAL, "The server failed.")
Unavailable = _error_class("Unavailable", Code.UNAVAILABLE, "The service cannot be reached; safe calls are retried.")
DataLoss = _error_class("DataLoss", Code.DATA_LOSS, "Unrecoverable data loss.")
Unauthenticated = _error_class(
    "Unauthenticated", Code.UNAUTHENTICATED, "Credential missing, malformed, expired or revoked."
)

BY_CODE: dict[str, type[Error]] = {cls.code: cls for cls in Error.__subclasses__()}


def from_connect(exc: ConnectError) -> Error:
    details: list[Message | RawDetail] = []
    for detail in exc.details:
        cls = _DETAIL_TYPES.get(detail.type_name)
        details.append(
            cls.FromString(detail.message_bytes) if cls else RawDetail(detail.type_name, detail.message_bytes)
        )
    return BY_CODE.get(exc.code.value, Unknown)(exc.message, details)
