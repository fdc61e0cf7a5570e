from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from audit.services import record
from controlplane.auth import Principal
from controlplane.errors import Error

from .. import selectors
from ..ids import new_id
from ..models import Job
from . import job_events, signal
from .common import enforce_quota, idempotent_create, lock_namespace, validate_image

MAX_ARGS = 256
MAX_ARG_LENGTH = 4096
MAX_ENV = 256
MAX_ENV_VALUE_LENGTH = 32768
_ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,255}")


def validate_command(command: Sequence[str]) -> list[str]:
    command = list(command)
    if len(command) > MAX_ARGS:
        raise Error.invalid_argument("command", f"at most {MAX_ARGS} arguments, got {len(command)}")
    for i, arg in enumerate(command):
        if len(arg) > MAX_ARG_LENGTH:
            raise Error.invalid_argument(f"command[{i}]", f"must be at most {MAX_ARG_LENGTH} characters")
    return command


def validate_env(env: Mapping[str, str]) -> dict[str, str]:
    env = dict(env)
    if len(env) > MAX_ENV:
        raise Error.invalid_argument("env", f"at most {MAX_ENV} variables, got {len(env)}")
    for name, value in env.items():
        if not _ENV_NAME_RE.fullmatch(name):
            raise Error.invalid_argument(f"env[{name!r}]", "names are [A-Za-z_][A-Za-z0-9_]*")
        if len(value) > MAX_ENV_VALUE_LENGTH:
            raise Error.invalid_argument(f"env[{name!r}]", f"must be at most {MAX_ENV_VALUE_LENGTH} characters")
    return env


def validate_timeout(seconds: int) -> int:
    limit = settings.JOBS_MAX_TIMEOUT_SECONDS
    if not 0 <= seconds <= limit:
        raise Error.invalid_argument("timeoutSeconds", f"must be 0 (no limit) to {limit} seconds, got {seconds}")
    return seconds


@transaction.atomic
@idempotent_create("RunJob", Job)
def run_job(
    *,
    actor: Principal,
    namespace: str,
    image: str,
    command: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    timeout_seconds: int = 0,
) -> Job:
    """Records the job QUEUED and wakes the runners waiting for work (workloads.services.leases)."""
    image = validate_image(image)
    command = validate_command(command)
    env = validate_env(env or {})
    timeout_seconds = validate_timeout(timeout_seconds)
    ns = lock_namespace(namespace)
    enforce_quota(ns, "max_running_jobs", Job.objects.filter(namespace=ns, state__in=Job.ACTIVE_STATES))
    job = Job.objects.create(
        job_id=new_id("job"),
        namespace=ns,
        image=image,
        command=command,
        env=env,
        timeout_seconds=timeout_seconds,
        created_by=actor.describe(),
    )
    job_events.changed(job, added=True)
    # Variable names only: values may be secrets and the audit log is widely readable.
    changes = {"image": image, "command": command, "env": sorted(env), "timeout_seconds": timeout_seconds}
    record(actor=actor, action="job.run", target=f"job:{job.job_id}", namespace=ns.name, changes=changes)
    signal.announce()
    return job


@transaction.atomic
def cancel_job(*, actor: Principal, job_id: str) -> Job:
    """A QUEUED job is CANCELLED at once. A RUNNING one is asked to stop: its runner sees
    cancel_requested at its next heartbeat, stops the container, and finishes it CANCELLED."""
    job = selectors.get(Job, job_id, for_update=True)
    if job.state not in Job.ACTIVE_STATES:
        raise Error.failed_precondition(f"job {job_id!r} is {job.state}; only queued or running jobs can be cancelled")
    if job.state == Job.State.QUEUED:
        job.state, job.finished_at = Job.State.CANCELLED, timezone.now()
    elif job.cancel_requested:
        return job  # asked already; the runner is stopping it
    job.cancel_requested = True
    job.reason = f"cancelled by {actor.describe()}"
    job.save(update_fields=["state", "finished_at", "cancel_requested", "reason", "updated_at"])
    job_events.changed(job)
    record(
        actor=actor,
        action="job.cancel",
        target=f"job:{job.job_id}",
        namespace=job.namespace.name,
        changes={"state_then": "queued" if job.state == Job.State.CANCELLED else "running"},
    )
    return job
