"""Every method of the containers services (and the runner API) × every kind of caller × own/other namespace.

The expectation is written from the rules (the role table, admins everywhere, the agent
keys' two doors, the error codes), not read from the code: `ACCESS` is the role table,
`expected()` its reading.
To add a kind of principal, add one `Caller` row and teach `credential()` how to obtain
its credential. OIDC-mapped users sign in with a cp_session whose groups are bound to
roles through the namespaces' bindings, exactly as after /auth/callback.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import pytest

from controlplane.auth import Role
from controlplane.auth.authenticators import SessionAuthenticator
from controlplane.auth.oidc import Identity
from namespaces.services import Binding, update_namespace
from runners.services import issue_runner
from tests.conftest import SYSTEM
from tests.support import world
from tests.support.world import METHODS, REQUESTS, path

pytestmark = pytest.mark.django_db

VIEWER, OPERATOR = Role.VIEWER, Role.OPERATOR
AGENTS_AND_ADMINS = None  # no namespace role suffices
RUNNERS = "runners"  # runner keys only, and they nothing else

# The role table: VIEWER reads (get/list of every kind, egress events); OPERATOR also mutates.
ACCESS = {
    "JobService/RunJob": OPERATOR,
    "JobService/GetJob": VIEWER,
    "JobService/ListJobs": VIEWER,
    "JobService/CancelJob": OPERATOR,
    "JobService/GetJobLogs": VIEWER,
    "JobService/WatchJobs": VIEWER,
    "JobService/FollowJobLogs": VIEWER,
    "SandboxService/CreateSandbox": OPERATOR,
    "SandboxService/GetSandbox": VIEWER,
    "SandboxService/ListSandboxes": VIEWER,
    "SandboxService/DeleteSandbox": OPERATOR,
    "SandboxService/GetPreviewUrl": VIEWER,
    "SandboxService/GetAppKey": OPERATOR,  # "read an app key" is in the operator row
    "EnvironmentService/RegisterEnvironment": OPERATOR,
    "EnvironmentService/GetEnvironment": VIEWER,
    "EnvironmentService/ListEnvironments": VIEWER,
    "EnvironmentService/BuildEnvironment": OPERATOR,
    "WorkspaceService/CreateWorkspace": OPERATOR,
    "WorkspaceService/GetWorkspace": VIEWER,
    "WorkspaceService/ListWorkspaces": VIEWER,
    "WorkspaceService/DeleteWorkspace": OPERATOR,
    "EgressService/GrantEgress": OPERATOR,
    "EgressService/RevokeEgress": OPERATOR,
    "EgressService/ListEgressGrants": VIEWER,
    "EgressService/ListEgressEvents": VIEWER,
    "EgressService/ReportEgressEvent": AGENTS_AND_ADMINS,
    "RunnerAdminService/IssueRunnerKey": AGENTS_AND_ADMINS,  # admins only (no door for agents)
    "RunnerAdminService/ListRunners": AGENTS_AND_ADMINS,
    "RunnerAdminService/RevokeRunner": AGENTS_AND_ADMINS,
    "RunnerService/AcquireWork": RUNNERS,
    "RunnerService/Heartbeat": RUNNERS,
    "RunnerService/AppendLogs": RUNNERS,
    "RunnerService/FinishWork": RUNNERS,
}
# What a runner key gets from the runner API with the world's requests (no lease is held).
RUNNER_OUTCOMES = {
    "RunnerService/AcquireWork": "ok",
    "RunnerService/Heartbeat": "failed_precondition",
    "RunnerService/AppendLogs": "failed_precondition",
    "RunnerService/FinishWork": "failed_precondition",
}
# The sandbox agent key: the only doors open to agent keys, each for the one
# resource the key is bound to ("workspace": its scope, "sandbox": its own sandbox).
AGENT_DOORS = {
    "WorkspaceService/GetWorkspace": "workspace",
    "EgressService/ReportEgressEvent": "sandbox",
}


@dataclass(frozen=True)
class Caller:
    name: str
    credential: str  # "none", "api_key", "agent", "oidc"
    roles: dict[str, Role] = field(default_factory=dict)  # "own"/"other" → role
    admin: bool = False
    workspace_scope: bool = False

    def __str__(self):
        return self.name


CALLERS = [
    Caller("no_credential", "none"),
    Caller("viewer", "api_key", roles={"own": VIEWER}),
    Caller("operator", "api_key", roles={"own": OPERATOR}),
    Caller("admin_key", "api_key", admin=True),
    Caller("other_namespace_key", "api_key", roles={"other": OPERATOR}),
    Caller("agent", "agent"),
    Caller("agent_with_workspace", "agent", workspace_scope=True),
    Caller("oidc_viewer", "oidc", roles={"own": VIEWER}),
    Caller("oidc_operator", "oidc", roles={"own": OPERATOR}),
    Caller("oidc_other_namespace", "oidc", roles={"other": OPERATOR}),
    Caller("oidc_platform_admin", "oidc", admin=True),
    Caller("runner", "runner"),
]


def expected(caller: Caller, method: str, target: str) -> str:
    if caller.credential == "none":
        return "unauthenticated"
    if ACCESS[method] is RUNNERS:
        return RUNNER_OUTCOMES[method] if caller.credential == "runner" else "permission_denied"
    if caller.credential == "runner":
        return "permission_denied"  # no role, not admin, and only the runner API admits it
    if caller.admin:
        return "ok"  # admin passes every namespace check
    if caller.credential == "agent":
        door = AGENT_DOORS.get(method)
        if target == "own" and (door == "sandbox" or (door == "workspace" and caller.workspace_scope)):
            return "ok"
        return "permission_denied"
    required = ACCESS[method]
    role = caller.roles.get(target)
    if required is AGENTS_AND_ADMINS or role is None or role < required:
        return "permission_denied"  # another namespace's resource is refused, not hidden
    return "ok"


def credential(caller: Caller, resources: dict, capabilities, make_key, sign_in) -> str | None:
    if caller.credential == "none":
        return None
    if caller.credential == "oidc":
        sign_in(caller, resources)
        return None  # the cp_session cookie is the credential
    if caller.credential == "agent":
        return capabilities.agent_key(resources["own"].sandbox_id)
    if caller.credential == "runner":
        return issue_runner(actor=SYSTEM, name="matrix runner")[1]
    if caller.admin:
        return make_key(world.OWN, Role.ADMIN)
    ((target, role),) = caller.roles.items()
    return make_key(resources[target].namespace, role)


@pytest.fixture
def sign_in(client, settings, django_user_model):
    """Signs the test client in as an OIDC user whose groups carry the caller's roles."""

    def sign_in(caller: Caller, resources: dict) -> None:
        settings.OIDC_ADMIN_GROUP = "platform-admins"
        groups = {"platform-admins"} if caller.admin else set()
        for target, role in caller.roles.items():
            group = f"{caller.name}-{target}"
            update_namespace(actor=SYSTEM, name=resources[target].namespace, groups=[Binding(group, role)])
            groups.add(group)
        client.force_login(django_user_model.objects.create_user(f"oidc:{caller.name}"))
        session = client.session
        identity = Identity(subject=caller.name, name=caller.name, groups=frozenset(groups), scopes=frozenset())
        SessionAuthenticator.store(session, identity, expires_at=time.time() + 3600)
        session.save()

    return sign_in


def test_tables_cover_every_method():
    assert sorted(ACCESS) == sorted(METHODS) == sorted(REQUESTS)


@pytest.mark.parametrize("target", ["own", "other"])
@pytest.mark.parametrize("caller", CALLERS, ids=str)
@pytest.mark.parametrize("method", METHODS)
def test_authorization(any_protocol, capabilities, make_key, sign_in, method, caller, target):
    resources = world.build(attach_own_workspace=caller.workspace_scope)
    token = credential(caller, resources, capabilities, make_key, sign_in)
    request = REQUESTS[method](resources[target])
    result = any_protocol(path(method), request, token=token)
    if result.protocol == "grpc-web" and caller.credential == "oidc":
        assert result.code == "invalid_argument", result  # cookie sessions speak Connect JSON only
        return
    assert (result.code or "ok") == expected(caller, method, target), result
    if result.code == "permission_denied" and "namespace" not in request:
        # Refused by id: the error must not tell the caller who owns the resource.
        message = result.message if result.protocol == "grpc-web" else result.body["message"]
        assert resources[target].namespace not in message, result
    if result.code is None:
        assert result.status == 200
