"""Authorizers: principal × request → allow, or raise permission_denied.

Each RPC method declares one; the dispatcher runs it after authentication and
before the handler. Resolving the namespace a request refers to may itself fail
with not_found (an id that exists nowhere), which is why authorizers may raise
any `Error`.
"""

from __future__ import annotations

from collections.abc import Callable

from google.protobuf.message import Message

from controlplane.auth import Kind, Principal, Role
from controlplane.errors import Error


class Permission:
    """Base authorizer. Subclasses implement `check`.

    Runner keys are refused by every permission but RunnerOnly (`admits_runners`): they hold
    no role and are not admin, and this closes the doors that need neither (Authenticated)."""

    admits_runners = False

    def check(self, principal: Principal, request: Message) -> None:
        raise NotImplementedError


class Authenticated(Permission):
    """Any authenticated principal: keys, agent keys, bearer JWTs and sessions alike.

    The dispatcher refuses anonymous callers before any permission runs; this is the
    explicit declaration that nothing more is required (e.g. WhoAmI).
    """

    def check(self, principal, request):
        if not principal.is_authenticated:
            raise Error.unauthenticated(principal.failure or "a credential is required")


class RunnerOnly(Permission):
    """Runner keys, and nobody else: the runner API (containers.runtime.v1.RunnerService)."""

    admits_runners = True

    def check(self, principal, request):
        if principal.kind is not Kind.RUNNER:
            raise Error.permission_denied("only runner keys may call the runner API")


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
        # A namespace looked up from a resource id is the owner's name: never echoed to a caller
        # who may not see it. A namespace the caller sent is theirs to read back.
        self.echo_namespace = namespace_of is None

    def check(self, principal, request):
        namespace = self.namespace_of(request)
        if principal.has_role(namespace, self.minimum):
            return
        held = principal.role_in(namespace)
        where = f"namespace {namespace!r}" if self.echo_namespace else "the namespace of this resource"
        if held is None:
            raise Error.permission_denied(f"caller has no role in {where}")
        raise Error.permission_denied(
            f"caller holds {held.wire_name} in {where}; {self.minimum.wire_name} or above is required"
        )


def _namespace_field(request: Message) -> str:
    namespace = getattr(request, "namespace", "")
    if not namespace:
        raise Error.invalid_argument("namespace", "is required")
    return namespace
