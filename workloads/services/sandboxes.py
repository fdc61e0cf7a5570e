from __future__ import annotations

from django.db import transaction

from apikeys.services import issue_agent_key, revoke_api_key
from audit.services import record
from controlplane.auth import Principal, Role
from controlplane.errors import Error

from .. import backends, selectors
from ..ids import new_id, new_secret
from ..models import Sandbox, Workspace
from .common import enforce_quota, lock_namespace, validate_image


@transaction.atomic
def create_sandbox(*, actor: Principal, namespace: str, image: str, workspace_id: str = "") -> Sandbox:
    """Records the sandbox, issues its agent key and hands both to the sandbox backend.

    Without a backend the call is unimplemented: the agent key's plaintext can go to no one
    else, so a sandbox recorded without one could never be started.
    """
    backend = backends.sandbox_backend()
    if backend is None:
        raise Error.unimplemented("sandboxes are not available: no sandbox backend is configured")
    image = validate_image(image)
    ns = lock_namespace(namespace)
    workspace = _workspace_to_attach(actor, ns.name, workspace_id) if workspace_id else None
    enforce_quota(ns, "max_sandboxes", Sandbox.objects.filter(namespace=ns).count())
    sandbox = Sandbox(
        sandbox_id=new_id("sbx"),
        namespace=ns,
        image=image,
        workspace=workspace,
        app_key=new_secret("sak"),
        created_by=actor.describe(),
    )
    key, plaintext = issue_agent_key(
        actor=actor, namespace=ns.name, sandbox_id=sandbox.sandbox_id, workspace_scope=workspace_id
    )
    sandbox.agent_key = key
    sandbox.save()
    record(
        actor=actor,
        action="sandbox.create",
        target=f"sandbox:{sandbox.sandbox_id}",
        namespace=ns.name,
        changes={"image": image, "workspace_id": workspace_id, "agent_key_id": key.key_id},
    )
    backend.create(sandbox, agent_key=plaintext)
    return sandbox


def _workspace_to_attach(actor: Principal, namespace: str, workspace_id: str) -> Workspace:
    workspace = Workspace.objects.select_related("namespace").filter(workspace_id=workspace_id).first()
    if workspace is None:
        raise Error.not_found(f"workspace {workspace_id!r} not found")
    if workspace.namespace.name != namespace:
        if not actor.has_role(workspace.namespace.name, Role.VIEWER):
            raise Error.permission_denied(f"workspace {workspace_id!r} is in a namespace the caller has no role in")
        raise Error.invalid_argument(
            "workspaceId", f"belongs to namespace {workspace.namespace.name!r}; attach a workspace of {namespace!r}"
        )
    return workspace


@transaction.atomic
def delete_sandbox(*, actor: Principal, sandbox_id: str) -> None:
    """Removes the sandbox and revokes its agent key in the same transaction."""
    sandbox = selectors.get(Sandbox, sandbox_id, for_update=True)
    backend = backends.sandbox_backend()
    if backend is not None:
        backend.delete(sandbox)
    if sandbox.agent_key_id is not None:
        revoke_api_key(actor=actor, key_id=sandbox.agent_key.key_id)
    namespace = sandbox.namespace.name
    sandbox.delete()
    record(actor=actor, action="sandbox.delete", target=f"sandbox:{sandbox_id}", namespace=namespace)


def preview_url(sandbox: Sandbox) -> str:
    domain = backends.preview_domain()
    if not domain:
        raise Error.unimplemented("preview URLs are not available: no preview domain is configured")
    return f"https://{sandbox.sandbox_id.replace('_', '-')}.{domain}/"
