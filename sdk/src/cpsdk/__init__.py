"""Python client for the container platform control plane.

Client() reads CP_BASE_URL and CP_API_KEY; client.jobs.run("busybox:1.36", command=["echo", "hi"]).
"""

from . import errors
from ._transport import NO_RETRIES, RetryPolicy
from .admin import IssuedKey
from .client import AdminClient, AsyncAdminClient, AsyncClient, Client
from .errors import (
    AlreadyExists,
    Error,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    Unauthenticated,
    Unavailable,
    Unimplemented,
)
from .types import Binding, InternalTarget, Role

__all__ = [
    "NO_RETRIES",
    "AdminClient",
    "AlreadyExists",
    "AsyncAdminClient",
    "AsyncClient",
    "Binding",
    "Client",
    "Error",
    "FailedPrecondition",
    "InternalTarget",
    "InvalidArgument",
    "IssuedKey",
    "NotFound",
    "PermissionDenied",
    "ResourceExhausted",
    "RetryPolicy",
    "Role",
    "Unauthenticated",
    "Unavailable",
    "Unimplemented",
    "errors",
]
