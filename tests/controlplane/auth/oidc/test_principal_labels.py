"""A local account and an OIDC person never share a label (issue 22, finding 4).

The break-glass superuser `root` and the person the provider calls `root` were both `user:root`:
in the audit log, in createdBy, and as the owner of requestIds, so the person could replay the
superuser's requestId and be handed the superuser's workspace."""

from __future__ import annotations

from audit.models import AuditEvent
from workloads.models import Workspace

CREATE = "containers.api.v1.WorkspaceService/CreateWorkspace"
BODY = {"namespace": "team-a", "name": "ops", "requestId": "8d9e7f52-2a3c-4f7e-9d0b-5b8f0c1a2e3d"}


def test_oidc_subject_root_cannot_replay_the_local_roots_request_id(
    client, rpc, django_user_model, oidc_settings, bound_namespaces
):
    client.force_login(django_user_model.objects.create_superuser("root", password=None))
    mine = rpc(CREATE, BODY)
    assert mine.status == 200, mine
    client.logout()

    token = oidc_settings.cli_sign_in("root", resource=oidc_settings.api_resource)["access_token"]
    theirs = rpc(CREATE, BODY, token=token)
    # Not the superuser's workspace: a new create, refused because the name is taken.
    assert theirs.code == "already_exists", theirs
    assert Workspace.objects.count() == 1

    assert mine.body["workspace"]["createdBy"] == "local:root"
    other = rpc(CREATE, {**BODY, "name": "ops-2"}, token=token)
    assert other.body["workspace"]["createdBy"] == f"oidc:{oidc_settings.issuer}#root", other
    actors = set(AuditEvent.objects.filter(action="workspace.create").values_list("actor", flat=True))
    assert actors == {"local:root", f"oidc:{oidc_settings.issuer}#root"}
