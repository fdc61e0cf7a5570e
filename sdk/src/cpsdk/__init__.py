"""Python client for the container platform control plane.

Client() reads CP_BASE_URL and CP_API_KEY; client.jobs.run("busybox:1.36", command=["echo", "hi"]).
"""

from importlib import metadata as _metadata

from . import errors
from ._transport import NO_RETRIES, RetryPolicy
from .admin import IssuedKey
from .client import AdminClient, AsyncAdminClient, AsyncClient, Client
from .errors import (
    Aborted,
    AlreadyExists,
    Canceled,
    ConfigurationError,
    DataLoss,
    DeadlineExceeded,
    Error,
    FailedPrecondition,
    FieldViolation,
    Internal,
    InvalidArgument,
    NotFound,
    OutOfRange,
    PermissionDenied,
    QuotaViolation,
    ResourceExhausted,
    Unauthenticated,
    Unavailable,
    Unimplemented,
    Unknown,
)
from .types import Binding, InternalTarget, Role

try:
    __version__ = _metadata.version("cpsdk")
except _metadata.PackageNotFoundError:  # imported from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = [
    "NO_RETRIES",
    "Aborted",
    "AdminClient",
    "AlreadyExists",
    "AsyncAdminClient",
    "AsyncClient",
    "Binding",
    "Canceled",
    "Client",
    "ConfigurationError",
    "DataLoss",
    "DeadlineExceeded",
    "Error",
    "FailedPrecondition",
    "FieldViolation",
    "Internal",
    "InternalTarget",
    "InvalidArgument",
    "IssuedKey",
    "NotFound",
    "OutOfRange",
    "PermissionDenied",
    "QuotaViolation",
    "ResourceExhausted",
    "RetryPolicy",
    "Role",
    "Unauthenticated",
    "Unavailable",
    "Unimplemented",
    "Unknown",
    "__version__",
    "errors",
]
