"""Who may call what on containers resources: VIEWER reads (get, list, egress events),
OPERATOR mutates (`viewer`, `operator`), admins pass every check; and the two narrow doors
open to sandbox agent keys (`AgentScoped`): their own sandbox, their own workspace.

Agent principals hold no namespace role, so every NamespaceRole check refuses them;
`AgentScoped` lets them through only for their own workspace or sandbox.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db.models import Model
from google.protobuf.message import Message

from controlplane.auth import Kind, Role
from controlplane.errors import Error
from controlplane.rpc import NamespaceRole, Permission

from . import selectors


def requested_id(model: type[Model], request: Message) -> str:
    field, json_name, _ = selectors.PUBLIC_IDS[model]
    value = getattr(request, field)
    if not value:
        raise Error.invalid_argument(json_name, "is required")
    return value


def requested_namespace(model: type[Model]) -> Callable[[Message], str]:
    """For by-id requests: request → the namespace of the resource it names (not_found if it
    exists nowhere)."""
    return lambda request: selectors.namespace_of(model, requested_id(model, request))


def viewer(model: type[Model] | None = None) -> NamespaceRole:
    """Reads: get/list of every kind, and egress events."""
    return NamespaceRole(Role.VIEWER, requested_namespace(model) if model else None)


def operator(model: type[Model] | None = None) -> NamespaceRole:
    """Mutations: run/cancel jobs, create/delete sandboxes and workspaces, register/build
    environments, grant/revoke egress, read an app key."""
    return NamespaceRole(Role.OPERATOR, requested_namespace(model) if model else None)


class AgentScoped(Permission):
    """A sandbox agent key may act on the one resource its key is bound to; everyone else
    goes through `otherwise`.

    `scope` is the Principal attribute holding that resource's id (workspace_scope or
    sandbox_id). The resource is looked up first, so an id that exists nowhere is not_found
    for agents too.
    """

    def __init__(self, model: type[Model], scope: str, otherwise: Permission):
        self.model = model
        self.scope = scope
        self.otherwise = otherwise

    def check(self, principal, request):
        if principal.kind is not Kind.AGENT:
            self.otherwise.check(principal, request)
            return
        wanted = requested_id(self.model, request)
        selectors.namespace_of(self.model, wanted)
        if not getattr(principal, self.scope) or getattr(principal, self.scope) != wanted:
            raise Error.permission_denied(f"this sandbox agent key is not scoped to {wanted!r}")
