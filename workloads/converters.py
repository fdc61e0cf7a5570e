"""Model → protobuf message conversion for containers resources; for the hot job reads also
→ the message's proto3 JSON object directly (served through controlplane.rpc.codecs.prepared)."""

from containers.api.v1 import egress_pb2, environment_pb2, job_pb2, sandbox_pb2, workspace_pb2
from controlplane import protojson
from controlplane.auth import Principal, Role
from namespaces.converters import timestamp

from .models import EgressEvent, EgressGrant, Environment, Job, Sandbox, Workspace

_JOB_STATES = {
    Job.State.QUEUED: job_pb2.JOB_STATE_QUEUED,
    Job.State.RUNNING: job_pb2.JOB_STATE_RUNNING,
    Job.State.SUCCEEDED: job_pb2.JOB_STATE_SUCCEEDED,
    Job.State.FAILED: job_pb2.JOB_STATE_FAILED,
    Job.State.CANCELLED: job_pb2.JOB_STATE_CANCELLED,
}
_JOB_STATE_NAMES = protojson.enum_names(job_pb2.JobState.DESCRIPTOR)
_SANDBOX_STATES = {
    Sandbox.State.PENDING: sandbox_pb2.SANDBOX_STATE_PENDING,
    Sandbox.State.RUNNING: sandbox_pb2.SANDBOX_STATE_RUNNING,
    Sandbox.State.STOPPED: sandbox_pb2.SANDBOX_STATE_STOPPED,
    Sandbox.State.FAILED: sandbox_pb2.SANDBOX_STATE_FAILED,
}
_ENVIRONMENT_STATES = {
    Environment.State.REGISTERED: environment_pb2.ENVIRONMENT_STATE_REGISTERED,
    Environment.State.BUILDING: environment_pb2.ENVIRONMENT_STATE_BUILDING,
    Environment.State.READY: environment_pb2.ENVIRONMENT_STATE_READY,
    Environment.State.FAILED: environment_pb2.ENVIRONMENT_STATE_FAILED,
}
_TARGET_KINDS = {
    EgressGrant.Kind.HOST: egress_pb2.EGRESS_TARGET_KIND_HOST,
    EgressGrant.Kind.INTERNAL: egress_pb2.EGRESS_TARGET_KIND_INTERNAL,
}
_EVENT_KINDS = {
    EgressEvent.Kind.GRANTED: egress_pb2.EGRESS_EVENT_KIND_GRANTED,
    EgressEvent.Kind.REVOKED: egress_pb2.EGRESS_EVENT_KIND_REVOKED,
    EgressEvent.Kind.CONNECTION: egress_pb2.EGRESS_EVENT_KIND_CONNECTION,
}


def job_to_proto(job: Job, reader: Principal) -> job_pb2.Job:
    return _job(job, _visible_env(job, reader))


def job_to_json(job: Job, reader: Principal) -> dict:
    """json_format.MessageToDict(job_to_proto(job, reader)), without building the message:
    fields in field-number order, defaults left out (exit_code is optional: 0 stays), enums by
    name, RFC 3339 timestamps. tests/workloads/test_converters.py proves the two equal over
    random jobs."""
    out = {
        key: value
        for key, value in (
            ("jobId", job.job_id),
            ("namespace", job.namespace.name),
            ("image", job.image),
            ("command", list(job.command)),
            ("env", _visible_env(job, reader)),
            ("state", _JOB_STATE_NAMES[_JOB_STATES[job.state]]),
            ("createTime", _moment(job.created_at)),
            ("updateTime", _moment(job.updated_at)),
            ("createdBy", job.created_by),
        )
        if value
    }
    if job.exit_code is not None:
        out["exitCode"] = job.exit_code
    for key, value in (
        ("startTime", _moment(job.started_at)),
        ("endTime", _moment(job.finished_at)),
        ("attempt", job.attempt),
        ("reason", job.reason),
        ("timeoutSeconds", job.timeout_seconds),
    ):
        if value:
            out[key] = value
    return out


def _visible_env(job: Job, reader: Principal) -> dict[str, str]:
    return job.env if may_read_env(reader, job.namespace.name) else dict.fromkeys(job.env, "")


def _moment(value) -> str | None:
    return protojson.timestamp(value) if value is not None else None


def may_read_env(reader: Principal, namespace: str) -> bool:
    # Env values may be secrets: like GetAppKey they need OPERATOR; a VIEWER sees the names only.
    return reader.has_role(namespace, Role.OPERATOR)


def job_snapshot(job: Job) -> bytes:
    """The job as WatchJobs streams it (workloads.models.JobEvent), without env values."""
    return _job(job, dict.fromkeys(job.env, "")).SerializeToString()


def job_from_snapshot(snapshot: bytes, env: dict[str, str] | None) -> job_pb2.Job:
    """A JobEvent's job; `env`: the job's values, for readers who may see them."""
    job = job_pb2.Job.FromString(bytes(snapshot))
    if env is not None:
        job.env.update(env)
    return job


def _job(job: Job, env: dict[str, str]) -> job_pb2.Job:
    return job_pb2.Job(
        job_id=job.job_id,
        namespace=job.namespace.name,
        image=job.image,
        command=job.command,
        env=env,
        state=_JOB_STATES[job.state],
        create_time=timestamp(job.created_at),
        update_time=timestamp(job.updated_at),
        created_by=job.created_by,
        exit_code=job.exit_code,
        start_time=timestamp(job.started_at),
        end_time=timestamp(job.finished_at),
        attempt=job.attempt,
        reason=job.reason,
        timeout_seconds=job.timeout_seconds,
    )


def sandbox_to_proto(sandbox: Sandbox) -> sandbox_pb2.Sandbox:
    return sandbox_pb2.Sandbox(
        sandbox_id=sandbox.sandbox_id,
        namespace=sandbox.namespace.name,
        image=sandbox.image,
        workspace_id=sandbox.workspace.workspace_id if sandbox.workspace else "",
        agent_key_id=sandbox.agent_key.key_id if sandbox.agent_key else "",
        create_time=timestamp(sandbox.created_at),
        created_by=sandbox.created_by,
        state=_SANDBOX_STATES[sandbox.state],
        reason=sandbox.reason,
    )


def environment_to_proto(environment: Environment) -> environment_pb2.Environment:
    return environment_pb2.Environment(
        environment_id=environment.environment_id,
        namespace=environment.namespace.name,
        name=environment.name,
        image=environment.image,
        state=_ENVIRONMENT_STATES[environment.state],
        create_time=timestamp(environment.created_at),
        update_time=timestamp(environment.updated_at),
        created_by=environment.created_by,
        image_digest=environment.image_digest,
        reason=environment.reason,
    )


def workspace_to_proto(workspace: Workspace) -> workspace_pb2.Workspace:
    return workspace_pb2.Workspace(
        workspace_id=workspace.workspace_id,
        namespace=workspace.namespace.name,
        name=workspace.name,
        create_time=timestamp(workspace.created_at),
        created_by=workspace.created_by,
    )


def grant_to_proto(grant: EgressGrant) -> egress_pb2.EgressGrant:
    return egress_pb2.EgressGrant(
        grant_id=grant.grant_id,
        namespace=grant.namespace.name,
        target=grant.target,
        kind=_TARGET_KINDS[grant.kind],
        create_time=timestamp(grant.created_at),
        created_by=grant.created_by,
    )


def event_to_proto(event: EgressEvent) -> egress_pb2.EgressEvent:
    return egress_pb2.EgressEvent(
        namespace=event.namespace.name,
        kind=_EVENT_KINDS[event.kind],
        target=event.target,
        grant_id=event.grant_id,
        sandbox_id=event.sandbox_id,
        allowed=bool(event.allowed),
        actor=event.actor,
        event_time=timestamp(event.at),
    )
