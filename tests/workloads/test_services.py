"""Behaviour of the five services: happy paths, capabilities, validation naming the field."""

import pytest
from django.core.management import call_command

from audit.models import AuditEvent
from controlplane.auth import Role
from namespaces.services import Target, register_internal_target
from tests.support import world
from tests.support.world import path

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator(namespace, other_namespace, make_key):
    return make_key("team-a", Role.OPERATOR)


def call(rpc, token, method, body):
    return rpc(path(method), body, token=token)


# ---- jobs ------------------------------------------------------------------------------------


def test_run_get_list_cancel_job(rpc, capabilities, operator):
    body = {"namespace": "team-a", "image": "python:3.12", "command": ["python", "-V"], "env": {"LOG": "1"}}
    job = call(rpc, operator, "JobService/RunJob", body).body["job"]
    assert job["jobId"].startswith("job_") and job["state"] == "JOB_STATE_QUEUED"
    assert (job["namespace"], job["command"], job["env"]) == ("team-a", ["python", "-V"], {"LOG": "1"})
    assert job["createdBy"].startswith("api_key:") and {"createTime", "updateTime"} <= set(job)
    assert call(rpc, operator, "JobService/GetJob", {"jobId": job["jobId"]}).body["job"] == job
    assert call(rpc, operator, "JobService/ListJobs", {"namespace": "team-a"}).body["jobs"] == [job]
    cancelled = call(rpc, operator, "JobService/CancelJob", {"jobId": job["jobId"]}).body["job"]
    assert cancelled["state"] == "JOB_STATE_CANCELLED" and cancelled["reason"].startswith("cancelled by api_key:")
    again = call(rpc, operator, "JobService/CancelJob", {"jobId": job["jobId"]})
    assert again.code == "failed_precondition"
    env_logged = AuditEvent.objects.get(action="job.run").changes["env"]
    assert env_logged == ["LOG"]  # names only: values may be secrets


def test_env_values_only_for_operators(rpc, capabilities, operator, make_key):
    body = {"namespace": "team-a", "image": "alpine", "env": {"SECRET": "s3cr3t", "LOG": "1"}}
    job_id = call(rpc, operator, "JobService/RunJob", body).body["job"]["jobId"]
    viewer = make_key("team-a", Role.VIEWER)
    seen = call(rpc, viewer, "JobService/GetJob", {"jobId": job_id}).body["job"]
    listed = call(rpc, viewer, "JobService/ListJobs", {"namespace": "team-a"}).body["jobs"][0]
    # proto3 JSON leaves out nothing in a map: the names stay, the values are empty.
    assert seen["env"] == listed["env"] == {"SECRET": "", "LOG": ""}
    for reader in (operator, make_key("team-a", Role.ADMIN)):
        assert call(rpc, reader, "JobService/GetJob", {"jobId": job_id}).body["job"]["env"]["SECRET"] == "s3cr3t"


def test_run_job_without_backend_stays_queued(rpc, no_capabilities, operator):
    job = call(rpc, operator, "JobService/RunJob", {"namespace": "team-a", "image": "alpine"}).body["job"]
    assert job["state"] == "JOB_STATE_QUEUED"


def test_list_pages_with_a_token(rpc, capabilities, operator, make_key):
    ids = [
        call(rpc, operator, "JobService/RunJob", {"namespace": "team-a", "image": "alpine"}).body["job"]["jobId"]
        for _ in range(3)
    ]
    first = call(rpc, operator, "JobService/ListJobs", {"namespace": "team-a", "pageSize": 2}).body
    assert [j["jobId"] for j in first["jobs"]] == ids[:0:-1]
    body = {"namespace": "team-a", "pageSize": 2, "pageToken": first["nextPageToken"]}
    second = call(rpc, operator, "JobService/ListJobs", body).body
    assert [j["jobId"] for j in second["jobs"]] == ids[:1] and "nextPageToken" not in second
    # A page token is bound to its namespace.
    replayed = {"namespace": "team-b", "pageToken": first["nextPageToken"]}
    result = call(rpc, make_key("team-a", Role.ADMIN), "JobService/ListJobs", replayed)
    assert result.body["details"][0]["debug"]["fieldViolations"][0]["field"] == "pageToken"


@pytest.mark.parametrize(
    "body, field",
    [
        ({"namespace": "team-a"}, "image"),
        ({"namespace": "team-a", "image": "Not An Image"}, "image"),
        ({"namespace": "team-a", "image": "alpine", "env": {"1BAD": "x"}}, "env['1BAD']"),
        ({"namespace": "team-a", "image": "alpine", "command": ["x"] * 257}, "command"),
        ({"image": "alpine"}, "namespace"),
    ],
)
def test_run_job_validation_names_the_field(rpc, capabilities, operator, body, field):
    result = call(rpc, operator, "JobService/RunJob", body)
    assert result.code == "invalid_argument", result
    assert result.body["details"][0]["debug"]["fieldViolations"][0]["field"] == field


# ---- sandboxes -------------------------------------------------------------------------------


def test_create_get_list_delete_sandbox(rpc, capabilities, operator):
    workspace = call(rpc, operator, "WorkspaceService/CreateWorkspace", {"namespace": "team-a", "name": "src"})
    workspace_id = workspace.body["workspace"]["workspaceId"]
    body = {"namespace": "team-a", "image": "python:3.12", "workspaceId": workspace_id}
    sandbox = call(rpc, operator, "SandboxService/CreateSandbox", body).body["sandbox"]
    assert sandbox["sandboxId"].startswith("sbx_") and sandbox["workspaceId"] == workspace_id
    assert sandbox["state"] == "SANDBOX_STATE_PENDING" and "agentKeyId" not in sandbox  # minted on acquisition
    got = call(rpc, operator, "SandboxService/GetSandbox", {"sandboxId": sandbox["sandboxId"]}).body
    assert got == {"sandbox": sandbox}
    listed = call(rpc, operator, "SandboxService/ListSandboxes", {"namespace": "team-a"}).body
    assert listed == {"sandboxes": [sandbox]}
    app_key = call(rpc, operator, "SandboxService/GetAppKey", {"sandboxId": sandbox["sandboxId"]}).body["appKey"]
    assert app_key.startswith("sak_")
    in_use = call(rpc, operator, "WorkspaceService/DeleteWorkspace", {"workspaceId": workspace_id})
    assert in_use.code == "failed_precondition"
    assert call(rpc, operator, "SandboxService/DeleteSandbox", {"sandboxId": sandbox["sandboxId"]}).body == {}
    gone = call(rpc, operator, "SandboxService/GetSandbox", {"sandboxId": sandbox["sandboxId"]})
    assert gone.code == "not_found"


def test_preview_url_under_the_configured_domain(rpc, capabilities, operator):
    sandbox = call(rpc, operator, "SandboxService/CreateSandbox", {"namespace": "team-a", "image": "node:22"})
    sandbox_id = sandbox.body["sandbox"]["sandboxId"]
    url = call(rpc, operator, "SandboxService/GetPreviewUrl", {"sandboxId": sandbox_id}).body["url"]
    assert url == f"https://{sandbox_id.replace('_', '-')}.preview.example.test/"


def test_without_capabilities_preview_build_and_sandboxes_are_unimplemented(rpc, capabilities, operator, settings):
    resources = world.populate("team-a")
    settings.CONTAINERS_PREVIEW_DOMAIN = ""
    settings.CONTAINERS_BUILDS_ENABLED = settings.CONTAINERS_SANDBOXES_ENABLED = False
    calls = [
        ("SandboxService/GetPreviewUrl", {"sandboxId": resources.sandbox_id}),
        ("EnvironmentService/BuildEnvironment", {"environmentId": resources.environment_id}),
        ("SandboxService/CreateSandbox", {"namespace": "team-a", "image": "alpine"}),
    ]
    for method, body in calls:
        result = call(rpc, operator, method, body)
        assert (result.status, result.code) == (501, "unimplemented"), (method, result)
        assert "CONTAINERS_" in result.body["message"] or "configured" in result.body["message"]


def test_unimplemented_only_for_allowed_callers(rpc, no_capabilities, namespace, make_key):
    viewer = make_key("team-a", Role.VIEWER)
    assert call(rpc, viewer, "SandboxService/CreateSandbox", {"namespace": "team-a", "image": "x"}).code == (
        "permission_denied"
    )
    assert call(rpc, None, "SandboxService/CreateSandbox", {"namespace": "team-a"}).code == "unauthenticated"


def test_sandbox_workspace_must_exist_and_be_of_the_namespace(rpc, capabilities, operator, make_key):
    other = world.workspaces.create_workspace(actor=world.SYSTEM, namespace="team-b", name="theirs")
    body = {"namespace": "team-a", "image": "alpine", "workspaceId": other.workspace_id}
    assert call(rpc, operator, "SandboxService/CreateSandbox", body).code == "permission_denied"
    admin = make_key("team-a", Role.ADMIN)
    refused = call(rpc, admin, "SandboxService/CreateSandbox", body)
    assert refused.body["details"][0]["debug"]["fieldViolations"][0]["field"] == "workspaceId"
    body["workspaceId"] = "wsp_nothere"
    assert call(rpc, operator, "SandboxService/CreateSandbox", body).code == "not_found"


# ---- environments ----------------------------------------------------------------------------


def test_register_get_list_build_environment(rpc, capabilities, operator):
    body = {"namespace": "team-a", "name": "py", "image": "python:3.12"}
    environment = call(rpc, operator, "EnvironmentService/RegisterEnvironment", body).body["environment"]
    assert environment["state"] == "ENVIRONMENT_STATE_REGISTERED" and environment["environmentId"].startswith("env_")
    assert call(rpc, operator, "EnvironmentService/RegisterEnvironment", body).code == "already_exists"
    by_id = {"environmentId": environment["environmentId"]}
    assert call(rpc, operator, "EnvironmentService/GetEnvironment", by_id).body == {"environment": environment}
    listed = call(rpc, operator, "EnvironmentService/ListEnvironments", {"namespace": "team-a"}).body
    assert listed == {"environments": [environment]}
    built = call(rpc, operator, "EnvironmentService/BuildEnvironment", by_id).body["environment"]
    assert built["state"] == "ENVIRONMENT_STATE_BUILDING"
    assert call(rpc, operator, "EnvironmentService/BuildEnvironment", by_id).code == "failed_precondition"


@pytest.mark.parametrize(
    "body, field",
    [
        ({"namespace": "team-a", "name": "Bad_Name", "image": "alpine"}, "name"),
        ({"namespace": "team-a", "name": "ok"}, "image"),
    ],
)
def test_register_environment_validation(rpc, capabilities, operator, body, field):
    result = call(rpc, operator, "EnvironmentService/RegisterEnvironment", body)
    assert result.body["details"][0]["debug"]["fieldViolations"][0]["field"] == field


# ---- workspaces ------------------------------------------------------------------------------


def test_create_get_list_delete_workspace(rpc, capabilities, operator):
    workspace = call(rpc, operator, "WorkspaceService/CreateWorkspace", {"namespace": "team-a", "name": "w"})
    workspace = workspace.body["workspace"]
    assert workspace["workspaceId"].startswith("wsp_") and workspace["namespace"] == "team-a"
    duplicate = call(rpc, operator, "WorkspaceService/CreateWorkspace", {"namespace": "team-a", "name": "w"})
    assert duplicate.code == "already_exists"
    by_id = {"workspaceId": workspace["workspaceId"]}
    assert call(rpc, operator, "WorkspaceService/GetWorkspace", by_id).body == {"workspace": workspace}
    listed = call(rpc, operator, "WorkspaceService/ListWorkspaces", {"namespace": "team-a"}).body
    assert listed == {"workspaces": [workspace]}
    assert call(rpc, operator, "WorkspaceService/DeleteWorkspace", by_id).body == {}
    assert call(rpc, operator, "WorkspaceService/GetWorkspace", by_id).code == "not_found"
    bad = call(rpc, operator, "WorkspaceService/CreateWorkspace", {"namespace": "team-a", "name": ""})
    assert bad.body["details"][0]["debug"]["fieldViolations"][0]["field"] == "name"


# ---- egress ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target, normalised, kind",
    [
        ("API.example.com", "api.example.com", "EGRESS_TARGET_KIND_HOST"),
        ("api.example.com:443", "api.example.com:443", "EGRESS_TARGET_KIND_HOST"),
        ("10.0.0.5:5432", "10.0.0.5:5432", "EGRESS_TARGET_KIND_HOST"),
        ("[2001:db8::1]:443", "[2001:db8::1]:443", "EGRESS_TARGET_KIND_HOST"),
        ("db", "db", "EGRESS_TARGET_KIND_INTERNAL"),
    ],
)
def test_grant_egress_targets(rpc, capabilities, operator, target, normalised, kind):
    register_internal_target(actor=world.SYSTEM, namespace="team-a", target=Target("db", "10.1.0.7", (5432,)))
    grant = call(rpc, operator, "EgressService/GrantEgress", {"namespace": "team-a", "target": target}).body["grant"]
    assert (grant["target"], grant["kind"], grant["namespace"]) == (normalised, kind, "team-a")
    assert grant["grantId"].startswith("egr_")


def test_unregistered_internal_target_is_failed_precondition(rpc, capabilities, operator):
    result = call(rpc, operator, "EgressService/GrantEgress", {"namespace": "team-a", "target": "db"})
    assert result.code == "failed_precondition" and "db" in result.body["message"]


@pytest.mark.parametrize("target", ["", "api.example.com:99999", "db:5432", "bad host.com", "2001:db8::1", "-x-.com"])
def test_grant_egress_validation_names_target(rpc, capabilities, operator, target):
    result = call(rpc, operator, "EgressService/GrantEgress", {"namespace": "team-a", "target": target})
    assert result.code == "invalid_argument", result
    assert result.body["details"][0]["debug"]["fieldViolations"][0]["field"] == "target"


@pytest.mark.parametrize(
    "target, rule",
    [
        ("169.254.169.254:80", "CONTAINERS_EGRESS_DENIED_NETWORKS 169.254.0.0/16"),
        ("127.0.0.1:22", "CONTAINERS_EGRESS_DENIED_NETWORKS 127.0.0.0/8"),
        ("[::1]:443", "CONTAINERS_EGRESS_DENIED_NETWORKS ::1/128"),
        ("[::ffff:169.254.169.254]", "CONTAINERS_EGRESS_DENIED_NETWORKS 169.254.0.0/16"),
        ("[64:ff9b::7f00:1]:80", "CONTAINERS_EGRESS_DENIED_NETWORKS 127.0.0.0/8"),
        ("[fe80::1]", "CONTAINERS_EGRESS_DENIED_NETWORKS fe80::/10"),
        ("0.0.0.0:8000", "CONTAINERS_EGRESS_DENIED_NETWORKS 0.0.0.0/8"),
        ("metadata.google.internal", "CONTAINERS_EGRESS_DENIED_HOSTS metadata.google.internal"),
        ("METADATA.google.internal:80", "CONTAINERS_EGRESS_DENIED_HOSTS metadata.google.internal"),
        ("app.localhost:3000", "CONTAINERS_EGRESS_DENIED_HOSTS .localhost"),
    ],
)
def test_egress_to_loopback_link_local_and_metadata_is_denied(rpc, capabilities, operator, target, rule):
    result = call(rpc, operator, "EgressService/GrantEgress", {"namespace": "team-a", "target": target})
    assert result.code == "permission_denied", result
    assert rule in result.body["message"]


@pytest.mark.parametrize("target", ["127.1:22", "0x7f.0.0.1", "0251.0376.0251.0376:80"])
def test_legacy_ipv4_forms_are_refused(rpc, capabilities, operator, target):
    result = call(rpc, operator, "EgressService/GrantEgress", {"namespace": "team-a", "target": target})
    assert result.code == "invalid_argument", result
    assert "a.b.c.d" in result.body["message"]


def test_internal_target_behind_a_denied_address_is_refused(rpc, capabilities, operator, namespace):
    # Registered before the rule existed (the services refuse it now): the host behind the name counts.
    namespace.internal_targets.create(name="meta", host="169.254.169.254", ports=[])
    result = call(rpc, operator, "EgressService/GrantEgress", {"namespace": "team-a", "target": "meta"})
    assert result.code == "permission_denied" and "169.254.0.0/16" in result.body["message"], result


def test_denied_rules_are_settings(rpc, capabilities, operator, settings):
    settings.CONTAINERS_EGRESS_DENIED_NETWORKS = ["10.0.0.0/8"]
    settings.CONTAINERS_EGRESS_DENIED_HOSTS = [".corp.example"]
    refused = [
        call(rpc, operator, "EgressService/GrantEgress", {"namespace": "team-a", "target": target}).code
        for target in ("10.0.0.5:5432", "git.corp.example", "corp.example", "127.0.0.1:22")
    ]
    assert refused == ["permission_denied", "permission_denied", "permission_denied", None]


def test_reported_connection_to_a_denied_address_is_still_recorded(rpc, capabilities, operator):
    sandbox = call(rpc, operator, "SandboxService/CreateSandbox", {"namespace": "team-a", "image": "alpine"})
    sandbox_id = sandbox.body["sandbox"]["sandboxId"]
    body = {"sandboxId": sandbox_id, "target": "169.254.169.254:80", "allowed": False}
    result = call(rpc, capabilities.agent_key(sandbox_id), "EgressService/ReportEgressEvent", body)
    assert result.status == 200, result


def test_grant_revoke_and_events(rpc, capabilities, operator):
    body = {"namespace": "team-a", "target": "pypi.org:443"}
    grant = call(rpc, operator, "EgressService/GrantEgress", body).body["grant"]
    assert call(rpc, operator, "EgressService/GrantEgress", body).code == "already_exists"
    grants = call(rpc, operator, "EgressService/ListEgressGrants", {"namespace": "team-a"}).body["grants"]
    assert grants == [grant]
    assert call(rpc, operator, "EgressService/RevokeEgress", {"grantId": grant["grantId"]}).body == {}
    assert call(rpc, operator, "EgressService/ListEgressGrants", {"namespace": "team-a"}).body == {}
    events = call(rpc, operator, "EgressService/ListEgressEvents", {"namespace": "team-a"}).body["events"]
    assert [(e["kind"], e["target"], e["grantId"]) for e in events] == [
        ("EGRESS_EVENT_KIND_REVOKED", "pypi.org:443", grant["grantId"]),
        ("EGRESS_EVENT_KIND_GRANTED", "pypi.org:443", grant["grantId"]),
    ]
    assert call(rpc, operator, "EgressService/RevokeEgress", {"grantId": grant["grantId"]}).code == "not_found"


# ---- ids, ops --------------------------------------------------------------------------------

BY_ID = {
    "JobService/GetJob": "jobId",
    "JobService/CancelJob": "jobId",
    "SandboxService/GetSandbox": "sandboxId",
    "SandboxService/DeleteSandbox": "sandboxId",
    "SandboxService/GetPreviewUrl": "sandboxId",
    "SandboxService/GetAppKey": "sandboxId",
    "EnvironmentService/GetEnvironment": "environmentId",
    "EnvironmentService/BuildEnvironment": "environmentId",
    "WorkspaceService/GetWorkspace": "workspaceId",
    "WorkspaceService/DeleteWorkspace": "workspaceId",
    "EgressService/RevokeEgress": "grantId",
    "EgressService/ReportEgressEvent": "sandboxId",
}


@pytest.mark.parametrize("method, field", sorted(BY_ID.items()))
def test_unknown_id_is_not_found_and_missing_id_names_the_field(rpc, capabilities, operator, make_key, method, field):
    # The lookup precedes the role check: a viewer learns not_found (ReportEgressEvent is for agents and admins).
    role = Role.ADMIN if method == "EgressService/ReportEgressEvent" else Role.VIEWER
    caller = make_key("team-a", role)
    body = {field: "xyz_nothere", "target": "a.example.com"}
    assert call(rpc, caller, method, body).code == "not_found"
    missing = call(rpc, caller, method, {"target": "a.example.com"})
    assert missing.body["details"][0]["debug"]["fieldViolations"][0]["field"] == field


def test_list_of_unknown_namespace(rpc, capabilities, operator, make_key):
    assert call(rpc, operator, "JobService/ListJobs", {"namespace": "team-z"}).code == "permission_denied"
    admin = make_key("team-a", Role.ADMIN)
    assert call(rpc, admin, "JobService/ListJobs", {"namespace": "team-z"}).code == "not_found"


def test_list_resources_command(capabilities, namespace, capsys):
    resources = world.populate("team-a")
    call_command("list_resources", "--namespace", "team-a")
    out = capsys.readouterr().out
    for attribute, public_id in vars(resources).items():
        if attribute not in ("namespace", "runner_id"):  # runners serve namespaces, are not in them
            assert public_id in out, attribute
    call_command("list_resources", "--namespace", "team-a", "--kind", "jobs")
    out = capsys.readouterr().out
    assert resources.job_id in out and resources.sandbox_id not in out


def test_admin_lists_resources_read_only(client, capabilities, namespace, django_user_model):
    resources = world.populate("team-a")
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.test", "x"))
    for model in ("job", "sandbox", "environment", "workspace", "egressgrant", "egressevent"):
        response = client.get(f"/admin/containers/{model}/")
        assert response.status_code == 200, model
        assert client.get(f"/admin/containers/{model}/add/").status_code == 403
    assert resources.sandbox_id in client.get("/admin/containers/sandbox/").content.decode()
