"""RPC services on the connectrpc runtime: declare services, check permissions, map errors."""

from controlplane.errors import Code, Error

from .context import present_fields, principal_of
from .permissions import AdminOnly, Authenticated, NamespaceRole, Permission, RunnerOnly
from .service import Service, rpc

__all__ = [
    "AdminOnly",
    "Authenticated",
    "Code",
    "Error",
    "NamespaceRole",
    "Permission",
    "RunnerOnly",
    "Service",
    "present_fields",
    "principal_of",
    "rpc",
]
