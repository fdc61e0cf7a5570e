from __future__ import annotations

from django.db import transaction

from audit.services import record
from controlplane.auth import Principal
from controlplane.errors import Error
from namespaces.validation import validate_namespace_name

from .. import selectors
from ..ids import new_id
from ..models import Sandbox, Workspace
from .common import enforce_quota, idempotent_create, lock_namespace


@transaction.atomic
@idempotent_create("CreateWorkspace", Workspace)
def create_workspace(*, actor: Principal, namespace: str, name: str) -> Workspace:
    validate_namespace_name(name, "name")
    ns = lock_namespace(namespace)
    if Workspace.objects.filter(namespace=ns, name=name).exists():
        raise Error.already_exists(f"workspace {name!r} already exists in namespace {ns.name!r}")
    enforce_quota(ns, "max_workspaces", Workspace.objects.filter(namespace=ns))
    workspace = Workspace.objects.create(
        workspace_id=new_id("wsp"), namespace=ns, name=name, created_by=actor.describe()
    )
    record(
        actor=actor,
        action="workspace.create",
        target=f"workspace:{workspace.workspace_id}",
        namespace=ns.name,
        changes={"name": name},
    )
    return workspace


@transaction.atomic
def delete_workspace(*, actor: Principal, workspace_id: str) -> None:
    workspace = selectors.get(Workspace, workspace_id, for_update=True)
    attached = list(Sandbox.objects.filter(workspace=workspace).values_list("sandbox_id", flat=True)[:5])
    if attached:
        raise Error.failed_precondition(
            f"workspace {workspace_id!r} is attached to sandboxes {', '.join(attached)}; delete them first"
        )
    namespace = workspace.namespace.name
    workspace.delete()
    record(actor=actor, action="workspace.delete", target=f"workspace:{workspace_id}", namespace=namespace)
