from __future__ import annotations

from django.conf import settings
from django.db import transaction

from apikeys.services import revoke_api_key
from audit.services import record
from controlplane.auth import Principal, Role
from controlplane.errors import Error

from .. import selectors
from ..ids import new_id, new_secret
from ..models import Sandbox, Workspace
from . import signal
from .common import enforce_quota, idempotent_create, lock_namespace, validate_image


@transaction.atomic
@idempotent_create("CreateSandbox", Sandbox)
def create_sandbox(*, actor: Principal, namespace: str, image: str, workspace_id: str = "") -> Sandbox:
    """Records the sandbox PENDING; a runner acquires it, and with it a fresh agent key
    (workloads.services.leases). Unimplemented where runners do not run sandboxes."""
    if not settings.CONTAINERS_SANDBOXES_ENABLED:
        raise Error.unimplemented("sandboxes are not available in this deployment (CONTAINERS_SANDBOXES_ENABLED)")
    image = validate_image(image)
    ns = lock_namespace(namespace)
    workspace = _workspace_to_attach(actor, ns.name, workspace_id) if workspace_id else None
    enforce_quota(ns, "max_sandboxes", Sandbox.objects.filter(namespace=ns, state__in=Sandbox.ACTIVE_STATES))
    sandbox = Sandbox(
        sandbox_id=new_id("sbx"),
        namespace=ns,
        image=image,
        workspace=workspace,
        app_key=new_secret("sak"),
        created_by=actor.describe(),
    )
    sandbox.save()
    record(
        actor=actor,
        action="sandbox.create",
        target=f"sandbox:{sandbox.sandbox_id}",
        namespace=ns.name,
        changes={"image": image, "workspace_id": workspace_id},
    )
    signal.announce()
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
    """Revokes the agent key at once. A sandbox a runner holds is asked to stop (its runner sees
    cancel_requested, stops the container, then the sandbox is removed); any other is removed now."""
    sandbox = selectors.get(Sandbox, sandbox_id, for_update=True)
    if sandbox.agent_key_id is not None:
        revoke_api_key(actor=actor, key_id=sandbox.agent_key.key_id)
    namespace = sandbox.namespace.name
    if sandbox.lease_expires_at is not None:
        sandbox.cancel_requested = True
        sandbox.save(update_fields=["cancel_requested"])
    else:
        sandbox.delete()
    record(actor=actor, action="sandbox.delete", target=f"sandbox:{sandbox_id}", namespace=namespace)


def preview_url(sandbox: Sandbox) -> str:
    domain = settings.CONTAINERS_PREVIEW_DOMAIN
    if not domain:
        raise Error.unimplemented("preview URLs are not available: no preview domain is configured")
    return f"https://{sandbox.sandbox_id.replace('_', '-')}.{domain}/"
