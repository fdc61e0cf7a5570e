"""Sandbox agent keys: issued by CreateSandbox to the backend only, scoped, revoked on delete."""

import json

import pytest

from apikeys.models import ApiKey
from apikeys.services import issue_api_key
from controlplane.auth import Role
from namespaces import rpc as namespace_rpc
from tests.support import world
from tests.support.world import METHODS, REQUESTS, path

pytestmark = pytest.mark.django_db


@pytest.fixture
def scoped(capabilities):
    """(resources by namespace, plaintext of the own sandbox's agent key, scoped to its workspace)."""
    resources = world.build(attach_own_workspace=True)
    return resources, capabilities.agent_key(resources["own"].sandbox_id)


def test_agent_key_goes_to_the_runner_never_to_the_caller(rpc, capabilities, namespace, make_key):
    operator = make_key("team-a", Role.OPERATOR)
    result = rpc(path("SandboxService/CreateSandbox"), {"namespace": "team-a", "image": "python:3.12"}, token=operator)
    sandbox = result.body["sandbox"]
    plaintext = capabilities.agent_key(sandbox["sandboxId"])
    assert plaintext.startswith("cpk_")
    assert "cpk_" not in json.dumps(result.body)
    assert "agentKeyId" not in sandbox  # minted when a runner acquires it
    acquired = rpc(path("SandboxService/GetSandbox"), {"sandboxId": sandbox["sandboxId"]}, token=operator).body
    key = ApiKey.objects.get(key_id=acquired["sandbox"]["agentKeyId"])
    assert (key.kind, key.role, key.sandbox_id) == (ApiKey.Kind.AGENT, None, sandbox["sandboxId"])
    assert key.digest != plaintext and plaintext not in key.digest


def test_its_workspace_is_served_and_no_other(rpc, scoped, capabilities):
    resources, agent = scoped
    own = rpc(path("WorkspaceService/GetWorkspace"), {"workspaceId": resources["own"].workspace_id}, token=agent)
    assert own.body["workspace"]["workspaceId"] == resources["own"].workspace_id
    another = world.workspaces.create_workspace(actor=world.SYSTEM, namespace="team-a", name="another")
    for workspace_id in (another.workspace_id, resources["other"].workspace_id):
        result = rpc(path("WorkspaceService/GetWorkspace"), {"workspaceId": workspace_id}, token=agent)
        assert result.code == "permission_denied", result
    missing = rpc(path("WorkspaceService/GetWorkspace"), {"workspaceId": "wsp_doesnotexist"}, token=agent)
    assert missing.code == "not_found"


@pytest.mark.parametrize("method", [m for m in METHODS if m not in ("WorkspaceService/GetWorkspace",)])
def test_every_other_call_is_refused(rpc, scoped, method):
    resources, agent = scoped
    # ReportEgressEvent is allowed for its own sandbox, so aim it at another sandbox.
    target = resources["other"] if method == "EgressService/ReportEgressEvent" else resources["own"]
    assert rpc(path(method), REQUESTS[method](target), token=agent).code == "permission_denied"


@pytest.mark.parametrize("method", [m.name for m in namespace_rpc.NamespaceService.descriptor.methods])
def test_namespace_service_is_refused(rpc, scoped, method):
    _, agent = scoped
    body = {"namespace": "team-a", "name": "x", "role": "ROLE_VIEWER", "keyId": "key_x"}
    assert rpc(f"containers.api.v1.NamespaceService/{method}", body, token=agent).code == "permission_denied"


def test_reports_egress_for_its_own_sandbox(rpc, scoped, make_key):
    resources, agent = scoped
    body = {"sandboxId": resources["own"].sandbox_id, "target": "PyPI.org:443", "allowed": False}
    event = rpc(path("EgressService/ReportEgressEvent"), body, token=agent).body["event"]
    assert event["kind"] == "EGRESS_EVENT_KIND_CONNECTION"
    assert (event["target"], event["sandboxId"], event["namespace"]) == ("pypi.org:443", body["sandboxId"], "team-a")
    assert event["actor"].startswith("agent:key_")
    viewer = make_key("team-a", Role.VIEWER)
    events = rpc(path("EgressService/ListEgressEvents"), {"namespace": "team-a"}, token=viewer).body["events"]
    assert events[0] == event


def test_key_without_workspace_is_served_no_workspace(rpc, capabilities):
    resources = world.build()
    agent = capabilities.agent_key(resources["own"].sandbox_id)
    result = rpc(path("WorkspaceService/GetWorkspace"), {"workspaceId": resources["own"].workspace_id}, token=agent)
    assert result.code == "permission_denied"


def test_revoked_when_the_sandbox_is_deleted(rpc, scoped, make_key):
    resources, agent = scoped
    own = {"workspaceId": resources["own"].workspace_id}
    assert rpc(path("WorkspaceService/GetWorkspace"), own, token=agent).code is None
    operator = make_key("team-a", Role.OPERATOR)
    sandbox_id = resources["own"].sandbox_id
    assert rpc(path("SandboxService/DeleteSandbox"), {"sandboxId": sandbox_id}, token=operator).body == {}
    result = rpc(path("WorkspaceService/GetWorkspace"), own, token=agent)
    assert (result.code, result.body["message"]) == ("unauthenticated", "API key has been revoked")
    assert ApiKey.objects.get(sandbox_id=sandbox_id).revoked_at is not None


def test_listed_as_agent_keys_with_their_scope(rpc, scoped, make_key):
    resources, _ = scoped
    admin_key = make_key("team-a", Role.ADMIN)
    keys = rpc("containers.api.v1.NamespaceService/ListApiKeys", {"namespace": "team-a"}, token=admin_key).body["keys"]
    agents = [k for k in keys if k["kind"] == "API_KEY_KIND_AGENT"]
    assert [k["workspaceScope"] for k in agents] == [resources["own"].workspace_id]
    assert "role" not in agents[0]  # agent keys hold no role


def test_cannot_be_issued_by_hand(rpc, admin_key):
    # IssueApiKeyRequest has no kind: an unknown JSON field is ignored, the key is standard.
    body = {"namespace": "team-a", "name": "sneaky", "role": "ROLE_VIEWER", "kind": "API_KEY_KIND_AGENT"}
    issued = rpc("containers.api.v1.NamespaceService/IssueApiKey", body, token=admin_key)
    assert issued.body["key"]["kind"] == "API_KEY_KIND_STANDARD"
    with pytest.raises(TypeError):
        issue_api_key(actor=world.SYSTEM, namespace="team-a", name="x", role=Role.VIEWER, kind=ApiKey.Kind.AGENT)


def test_whoami_names_the_agent_and_its_workspace_scope(rpc, scoped):
    resources, agent = scoped
    me = rpc("containers.api.v1.IdentityService/WhoAmI", {}, token=agent).body
    assert me["kind"] == "agent"
    assert me["workspaceScope"] == resources["own"].workspace_id
    assert me["keyId"].startswith("key_") and "namespaces" not in me  # an agent holds no role
