"""A small world of resources in two namespaces, and one well-formed request per method.

Built through the services (as an operator would), with the recording capabilities configured.
"""

from __future__ import annotations

from dataclasses import dataclass

from containers.api.v1 import egress_pb2, environment_pb2, job_pb2, runner_admin_pb2, sandbox_pb2, workspace_pb2
from containers.runtime.v1 import runner_pb2
from controlplane.auth import Principal
from namespaces.services import create_namespace
from runners.services import issue_runner
from workloads.services import egress, environments, jobs, sandboxes, workspaces

SYSTEM = Principal.system("tests")
OWN, OTHER = "team-a", "team-b"
SERVICES = [
    module.DESCRIPTOR.services_by_name[name]
    for module, name in (
        (job_pb2, "JobService"),
        (sandbox_pb2, "SandboxService"),
        (environment_pb2, "EnvironmentService"),
        (workspace_pb2, "WorkspaceService"),
        (egress_pb2, "EgressService"),
        (runner_admin_pb2, "RunnerAdminService"),
        (runner_pb2, "RunnerService"),
    )
]
# "JobService/RunJob", ... from the proto descriptors: a new method joins every table-driven test.
METHODS = [f"{service.name}/{method.name}" for service in SERVICES for method in service.methods]


def path(method: str) -> str:
    package = "containers.runtime.v1" if method.startswith("RunnerService/") else "containers.api.v1"
    return f"{package}.{method}"


@dataclass
class Resources:
    """One of each kind in one namespace."""

    namespace: str
    job_id: str
    sandbox_id: str
    environment_id: str
    workspace_id: str
    grant_id: str
    runner_id: str  # a runner serving this namespace only


def populate(namespace: str, *, attach_workspace: bool = False) -> Resources:
    workspace = workspaces.create_workspace(actor=SYSTEM, namespace=namespace, name="ws")
    sandbox = sandboxes.create_sandbox(
        actor=SYSTEM,
        namespace=namespace,
        image="python:3.12",
        workspace_id=workspace.workspace_id if attach_workspace else "",
    )
    return Resources(
        namespace=namespace,
        job_id=jobs.run_job(actor=SYSTEM, namespace=namespace, image="alpine:3").job_id,
        sandbox_id=sandbox.sandbox_id,
        environment_id=environments.register_environment(
            actor=SYSTEM, namespace=namespace, name="env", image="python:3.12"
        ).environment_id,
        workspace_id=workspace.workspace_id,
        grant_id=egress.grant_egress(actor=SYSTEM, namespace=namespace, target="api.example.com").grant_id,
        runner_id=issue_runner(actor=SYSTEM, name="runner", namespaces=[namespace])[0].runner_id,
    )


def build(*, attach_own_workspace: bool = False) -> dict[str, Resources]:
    """team-a ("own") and team-b ("other"), each populated."""
    for name in (OWN, OTHER):
        create_namespace(actor=SYSTEM, name=name)
    return {
        "own": populate(OWN, attach_workspace=attach_own_workspace),
        "other": populate(OTHER),
    }


# A request that succeeds for a caller allowed to make it, against the resources `r`.
REQUESTS = {
    "JobService/RunJob": lambda r: {"namespace": r.namespace, "image": "alpine:3", "command": ["true"]},
    "JobService/GetJob": lambda r: {"jobId": r.job_id},
    "JobService/ListJobs": lambda r: {"namespace": r.namespace},
    "JobService/CancelJob": lambda r: {"jobId": r.job_id},
    "JobService/GetJobLogs": lambda r: {"jobId": r.job_id},
    "JobService/WatchJobs": lambda r: {"namespace": r.namespace},
    "JobService/FollowJobLogs": lambda r: {"jobId": r.job_id},
    "SandboxService/CreateSandbox": lambda r: {"namespace": r.namespace, "image": "python:3.12"},
    "SandboxService/GetSandbox": lambda r: {"sandboxId": r.sandbox_id},
    "SandboxService/ListSandboxes": lambda r: {"namespace": r.namespace},
    "SandboxService/DeleteSandbox": lambda r: {"sandboxId": r.sandbox_id},
    "SandboxService/GetPreviewUrl": lambda r: {"sandboxId": r.sandbox_id},
    "SandboxService/GetAppKey": lambda r: {"sandboxId": r.sandbox_id},
    "EnvironmentService/RegisterEnvironment": lambda r: {"namespace": r.namespace, "name": "new", "image": "node:22"},
    "EnvironmentService/GetEnvironment": lambda r: {"environmentId": r.environment_id},
    "EnvironmentService/ListEnvironments": lambda r: {"namespace": r.namespace},
    "EnvironmentService/BuildEnvironment": lambda r: {"environmentId": r.environment_id},
    "WorkspaceService/CreateWorkspace": lambda r: {"namespace": r.namespace, "name": "new"},
    "WorkspaceService/GetWorkspace": lambda r: {"workspaceId": r.workspace_id},
    "WorkspaceService/ListWorkspaces": lambda r: {"namespace": r.namespace},
    "WorkspaceService/DeleteWorkspace": lambda r: {"workspaceId": r.workspace_id},
    "EgressService/GrantEgress": lambda r: {"namespace": r.namespace, "target": "pypi.org:443"},
    "EgressService/RevokeEgress": lambda r: {"grantId": r.grant_id},
    "EgressService/ListEgressGrants": lambda r: {"namespace": r.namespace},
    "EgressService/ListEgressEvents": lambda r: {"namespace": r.namespace},
    "EgressService/ReportEgressEvent": lambda r: {"sandboxId": r.sandbox_id, "target": "pypi.org:443", "allowed": True},
    "RunnerAdminService/IssueRunnerKey": lambda r: {"name": "new", "namespaces": [r.namespace]},
    "RunnerAdminService/ListRunners": lambda r: {},
    "RunnerAdminService/RevokeRunner": lambda r: {"runnerId": r.runner_id},
    # Lease calls with a token that holds no lease: past authorization, failed_precondition.
    "RunnerService/AcquireWork": lambda r: {"kinds": ["WORK_KIND_BUILD"]},
    "RunnerService/Heartbeat": lambda r: {"workId": r.job_id, "leaseToken": "not-a-lease"},
    "RunnerService/AppendLogs": lambda r: {"workId": r.job_id, "leaseToken": "not-a-lease", "data": "aGk="},
    "RunnerService/FinishWork": lambda r: {"workId": r.job_id, "leaseToken": "x", "result": "RESULT_EXITED"},
}
