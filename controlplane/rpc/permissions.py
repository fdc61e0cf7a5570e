"""Authorizers: principal × request → allow, or raise permission_denied.

Each RPC method declares one; the dispatcher runs it after authentication and
before the handler. Resolving the namespace a request refers to may itself fail
with not_found (an id that exists nowhere), which is why authorizers may raise
any `Error`.
"""

from __future__ import annotations

from collections.abc import Callable

from google.protobuf.message import Message

from controlplane.auth import Principal, Role
from controlplane.errors import Error


class Permission:
    """Base authorizer. Subclasses implement `check`."""

    def check(self, principal: Principal, request: Message) -> None:
        raise NotImplementedError


class AdminOnly(Permission):
    def check(self, principal, request):
        if not principal.admin:
            raise Error.permission_denied("this operation requires an admin caller")


class NamespaceRole(Permission):
    """Requires at least `minimum` in the namespace the request refers to.

    `namespace_of(request)` returns the namespace name: a request field, or a lookup
    of the resource the request names by id (raising not_found if it exists nowhere).
    """

    def __init__(self, minimum: Role, namespace_of: Callable[[Message], str] | None = None):
        self.minimum = minimum
        self.namespace_of = namespace_of or _namespace_field

    def check(self, principal, request):
        namespace = self.namespace_of(request)
        if principal.has_role(namespace, self.minimum):
            return
        held = principal.role_in(namespace)
        if held is None:
            raise Error.permission_denied(f"caller has no role in namespace {namespace!r}")
        raise Error.permission_denied(
            f"caller holds {held.wire_name} in namespace {namespace!r}; {self.minimum.wire_name} or above is required"
        )


def _namespace_field(request: Message) -> str:
    namespace = getattr(request, "namespace", "")
    if not namespace:
        raise Error.invalid_argument("namespace", "is required")
    return namespace
