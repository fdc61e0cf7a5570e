"""Connect unary RPC for Django: declare services, check permissions, speak the protocol."""

from .codes import Code
from .errors import Error
from .permissions import AdminOnly, Authenticated, NamespaceRole, Permission
from .service import Context, Service, rpc

__all__ = [
    "AdminOnly",
    "Authenticated",
    "Code",
    "Context",
    "Error",
    "NamespaceRole",
    "Permission",
    "Service",
    "rpc",
]
