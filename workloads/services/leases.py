"""Runners lease work (jobs, sandboxes, builds) here: acquire, renew, log, finish, lose.

A lease is proven by a token only its runner knows (the database keeps its SHA-256). It is
held while lease_expires_at is set; a lease not renewed by then is lost (`reap_expired`,
run by AcquireWork now and then and by `manage.py reap_leases`). No engine is called: the
runner does that, outside any transaction, and reports back.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

from django.conf import settings
from django.db import connection, router, transaction
from django.db.models import Model
from django.utils import timezone

from apikeys.services import issue_agent_key, revoke_api_key
from audit.services import record
from containers.runtime.v1 import runner_pb2 as pb
from controlplane.auth import Principal
from controlplane.errors import Error
from controlplane.observability.metrics import record_lease_expiries
from controlplane.precompiled import PrecompiledQuery
from runners.models import Runner

from ..models import Environment, Job, JobLogChunk, Sandbox
from . import job_events, signal

MAX_WAIT_SECONDS = 20
MAX_LOG_CHUNK = 1024 * 1024  # bytes per AppendLogs
REAP_EVERY_SECONDS = 5.0  # AcquireWork reaps at most this often per process
REAP_BATCH = 100
DEADLINE_MARGIN_SECONDS = 1.0  # a long poll answers this long before the caller's deadline


@dataclass(frozen=True)
class Kind:
    wire: int
    model: type[Model]
    id_field: str
    prefix: str
    waiting: str  # the state work waits in for a runner
    what: str
    # States a held lease can be in, when they lead the model's lease index (jobs): the reaper's
    # look for expired leases then uses it.
    leased_in: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """job, sandbox or build: the protocol's name of the kind (and the metrics' label)."""
        return pb.WorkKind.Name(self.wire).removeprefix("WORK_KIND_").lower()


JOB = Kind(pb.WORK_KIND_JOB, Job, "job_id", "job_", Job.State.QUEUED, "job", Job.ACTIVE_STATES)
SANDBOX = Kind(pb.WORK_KIND_SANDBOX, Sandbox, "sandbox_id", "sbx_", Sandbox.State.PENDING, "sandbox")
BUILD = Kind(pb.WORK_KIND_BUILD, Environment, "environment_id", "env_", Environment.State.BUILDING, "environment")
# Interactive work first: a sandbox someone waits for, then builds, then the job queue.
KINDS = (SANDBOX, BUILD, JOB)


def kind_of(work_id: str) -> Kind:
    for kind in KINDS:
        if work_id.startswith(kind.prefix):
            return kind
    raise Error.invalid_argument("workId", "must be a job, sandbox or environment id (job_…, sbx_…, env_…)")


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _ttl() -> timedelta:
    return timedelta(seconds=settings.RUNNER_LEASE_TTL_SECONDS)


RUNNER_MEMO_SECONDS = 60.0
_runners: dict[str, tuple[float, Runner]] = {}


def runner_of(principal: Principal) -> Runner:
    """The caller's runner, remembered a minute per process: what AcquireWork reads of it (its
    namespaces) never changes, and a revoked runner's key no longer authenticates anyway."""
    now = time.monotonic()
    memo = _runners.get(principal.key_id)
    if memo is not None and now - memo[0] < RUNNER_MEMO_SECONDS:
        return memo[1]
    runner = Runner.objects.filter(key__key_id=principal.key_id).first()
    if runner is None:  # a runner key always has its runner; a deleted one is no runner
        raise Error.permission_denied("this key belongs to no runner")
    _runners[principal.key_id] = (now, runner)
    return runner


_seen: dict[str, float] = {}


def note_seen(principal: Principal, version: str | None = None) -> None:
    """Records the runner's last call, at most once per RUNNER_LAST_SEEN_RESOLUTION_SECONDS
    in this process (and when its version changes)."""
    now = time.monotonic()
    if version is None and now - _seen.get(principal.key_id, -1e9) < settings.RUNNER_LAST_SEEN_RESOLUTION_SECONDS:
        return
    _seen[principal.key_id] = now
    fields = {"last_seen_at": timezone.now()}
    if version:
        fields["version"] = version
    Runner.objects.filter(key__key_id=principal.key_id).update(**fields)


# --- AcquireWork ---------------------------------------------------------------------


def acquire_work(
    *,
    principal: Principal,
    kinds: Sequence[int] = (),
    wait_seconds: int = 0,
    version: str = "",
    deadline: float | None = None,
) -> tuple[pb.Work | None, float]:
    """(work, retry_after seconds): one piece of work claimed exactly once, or None.

    Waits up to wait_seconds for work where NOTIFY can wake it (holding no transaction and
    no connection meanwhile); elsewhere answers at once with RUNNER_POLL_SECONDS to wait.
    `deadline` (time.monotonic()): the caller's own, which the wait ends a little before."""
    if not 0 <= wait_seconds <= MAX_WAIT_SECONDS:
        raise Error.invalid_argument("waitSeconds", f"must be 0..{MAX_WAIT_SECONDS}, got {wait_seconds}")
    wanted = _wanted(kinds)
    runner = runner_of(principal)
    if version and version != runner.version:
        runner.version = version  # the memo's copy too
        note_seen(principal, version)
    else:
        note_seen(principal)
    _reap_now_and_then(principal)
    until = time.monotonic() + wait_seconds
    if deadline is not None:
        until = min(until, deadline - DEADLINE_MARGIN_SECONDS)
    waker = signal.work_signal()
    while True:
        ticket = waker.ticket() if waker else 0
        work = claim(principal, runner, wanted)
        if work is not None:
            return work, 0
        if waker is None or not waker.listening:
            return None, settings.RUNNER_POLL_SECONDS
        remaining = until - time.monotonic()
        if remaining <= 0:
            return None, 0
        if not connection.in_atomic_block:
            connection.close()  # back to the pool (or closed): none is held while waiting
        waker.wait(ticket, min(remaining, settings.RUNNER_RECHECK_SECONDS))


def _wanted(kinds: Sequence[int]) -> list[Kind]:
    by_wire = {kind.wire: kind for kind in KINDS}
    for i, wire in enumerate(kinds):
        if wire not in by_wire:
            raise Error.invalid_argument(f"kinds[{i}]", "must be WORK_KIND_JOB, WORK_KIND_SANDBOX or WORK_KIND_BUILD")
    # A deployment that does not serve sandboxes or builds has none queued: no query for them.
    enabled = {SANDBOX: settings.CONTAINERS_SANDBOXES_ENABLED, BUILD: settings.CONTAINERS_BUILDS_ENABLED}
    return [kind for kind in KINDS if (not kinds or kind.wire in kinds) and enabled.get(kind, True)]


def _claimable(kind: Kind, namespaces: Sequence[str] = ()):
    """The next waiting work of `kind`, locked (skipping rows other runners hold locked)."""
    queryset = kind.model.objects.select_for_update(skip_locked=True, of=("self",)).select_related("namespace")
    queryset = queryset.filter(state=kind.waiting, lease_expires_at__isnull=True)
    if namespaces:
        queryset = queryset.filter(namespace__name__in=namespaces)
    return queryset.order_by("id")[:1]


# Idle runners look every few seconds: compiling the queryset each time cost more than running
# it (~1 ms of an idle AcquireWork's 3.5 ms). A runner limited to namespaces builds its own.
_NEXT_WAITING = {kind: PrecompiledQuery(partial(_claimable, kind)) for kind in KINDS}


@transaction.atomic
def claim(principal: Principal, runner: Runner, wanted: Sequence[Kind]) -> pb.Work | None:
    """Leases the oldest waiting work of the wanted kinds in the runner's namespaces.

    PostgreSQL: FOR UPDATE SKIP LOCKED, so concurrent runners each take a different row.
    SQLite: the transaction takes the database's write lock first (transaction_mode IMMEDIATE)."""
    for kind in wanted:
        if runner.namespaces:
            found = list(_claimable(kind, runner.namespaces))
        else:
            found = _NEXT_WAITING[kind].objects(router.db_for_write(kind.model))
        if found:
            return _lease(principal, runner, kind, found[0])
    return None


def _lease(principal: Principal, runner: Runner, kind: Kind, row) -> pb.Work:
    now = timezone.now()
    token = secrets.token_urlsafe(32)
    row.runner = runner
    row.lease_digest = token_digest(token)
    row.lease_expires_at = now + _ttl()
    row.attempt += 1
    row.result = ""
    row.cancel_requested = False
    fields = ["runner", "lease_digest", "lease_expires_at", "attempt", "result", "cancel_requested"]
    agent_key = ""
    if kind is JOB:
        row.state, row.started_at, row.reason = Job.State.RUNNING, now, ""
        fields += ["state", "started_at", "reason", "updated_at"]
    elif kind is SANDBOX:
        agent_key = _mint_agent_key(principal, row)
        fields += ["agent_key"]
    row.save(update_fields=fields)
    if kind is JOB:
        job_events.changed(row)
    public_id = getattr(row, kind.id_field)
    record(
        actor=principal,
        action=f"{kind.what}.lease",
        target=f"{kind.what}:{public_id}",
        namespace=row.namespace.name,
        changes={"runner_id": runner.runner_id, "attempt": row.attempt},
    )
    return _work(kind, row, token, agent_key)


def _mint_agent_key(principal: Principal, sandbox: Sandbox) -> str:
    """A new agent key for this acquisition; the previous one (an earlier runner's) is revoked."""
    if sandbox.agent_key_id is not None:
        revoke_api_key(actor=principal, key_id=sandbox.agent_key.key_id)
    key, plaintext = issue_agent_key(
        actor=principal,
        namespace=sandbox.namespace.name,
        sandbox_id=sandbox.sandbox_id,
        workspace_scope=sandbox.workspace.workspace_id if sandbox.workspace_id else "",
    )
    sandbox.agent_key = key
    return plaintext


def _work(kind: Kind, row, token: str, agent_key: str) -> pb.Work:
    work = pb.Work(
        kind=kind.wire,
        work_id=getattr(row, kind.id_field),
        namespace=row.namespace.name,
        lease_token=token,
        attempt=row.attempt,
        image=row.image,
        agent_key=agent_key,
    )
    work.lease_expire_time.FromDatetime(row.lease_expires_at)
    work.heartbeat_interval.FromSeconds(settings.RUNNER_HEARTBEAT_SECONDS)
    if kind is JOB:
        work.command.extend(row.command)
        work.env.update(row.env)
        work.timeout_seconds = row.timeout_seconds
        work.log_offset = row.log_size
    elif kind is SANDBOX:
        work.workspace_id = row.workspace.workspace_id if row.workspace_id else ""
    else:
        work.pull_policy = settings.CONTAINERS_BUILD_PULL_POLICY
    return work


# --- Heartbeat -----------------------------------------------------------------------


def heartbeat(*, principal: Principal, work_id: str, lease_token: str, running: bool = False) -> tuple[datetime, bool]:
    """(new expiry, cancel_requested): one round trip, which also records the runner's last call.

    A lease that expired, ended, or was given to another runner: failed_precondition."""
    kind = kind_of(work_id)
    now = timezone.now()
    expires = now + _ttl()
    model = kind.model._meta
    column = {field.name: field.column for field in model.concrete_fields}
    quote, adapt = connection.ops.quote_name, connection.ops.adapt_datetimefield_value
    sets, params = [f"{quote(column['lease_expires_at'])} = %s"], [adapt(expires)]
    if kind is SANDBOX and running:
        state = quote(column["state"])
        sets.append(f"{state} = CASE WHEN {state} = %s THEN %s ELSE {state} END")
        params += [Sandbox.State.PENDING, Sandbox.State.RUNNING]
    # Names from the models' own metadata; every value is a parameter.
    where = (
        f"{quote(column[kind.id_field])} = %s AND {quote(column['lease_digest'])} = %s"
        f" AND {quote(column['lease_expires_at'])} > %s"
    )
    cancel, runner = quote(column["cancel_requested"]), quote(column["runner"])
    sql = f"UPDATE {quote(model.db_table)} SET {', '.join(sets)} WHERE {where} RETURNING {cancel}, {runner}"  # noqa: S608
    params += [work_id, token_digest(lease_token), adapt(now)]
    folded = connection.vendor == "postgresql"
    if folded:
        sql, params = _with_last_seen(sql, params, cancel, runner, now)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        raise _not_held(work_id)
    if not folded:
        note_seen(principal)
    return expires, bool(row[0])


def _with_last_seen(lease_sql: str, params: list, cancel: str, runner: str, now: datetime) -> tuple[str, list]:
    """PostgreSQL: the lease's UPDATE and the runner's last-seen UPDATE in one statement (a
    data-modifying CTE). The runner row is written only when its last-seen is older than
    RUNNER_LAST_SEEN_RESOLUTION_SECONDS, so frequent heartbeats leave no dead tuples behind."""
    quote, adapt = connection.ops.quote_name, connection.ops.adapt_datetimefield_value
    table = quote(Runner._meta.db_table)
    seen, pk = quote(Runner._meta.get_field("last_seen_at").column), quote(Runner._meta.pk.column)
    stale = now - timedelta(seconds=settings.RUNNER_LAST_SEEN_RESOLUTION_SECONDS)
    sql = (
        f"WITH lease AS ({lease_sql}), seen AS ("  # noqa: S608
        f"UPDATE {table} SET {seen} = %s FROM lease WHERE {table}.{pk} = lease.{runner}"
        f" AND ({table}.{seen} IS NULL OR {table}.{seen} < %s))"
        f" SELECT {cancel} FROM lease"
    )
    return sql, [*params, adapt(now), adapt(stale)]


def _not_held(work_id: str) -> Error:
    return Error.failed_precondition(
        f"the lease on {work_id!r} is not held: it expired, ended, or was given to another runner; stop its container"
    )


def grace_seconds() -> int:
    return settings.RUNNER_STOP_GRACE_SECONDS


# --- AppendLogs ----------------------------------------------------------------------


@transaction.atomic
def append_logs(*, work_id: str, lease_token: str, offset: int, data: bytes) -> int:
    """Appends a job's output at `offset` (bytes already stored are skipped); the next offset."""
    if kind_of(work_id) is not JOB:
        raise Error.invalid_argument("workId", "only jobs have logs")
    if len(data) > MAX_LOG_CHUNK:
        raise Error.invalid_argument("data", f"at most {MAX_LOG_CHUNK} bytes per call, got {len(data)}")
    if offset < 0:
        raise Error.invalid_argument("offset", "must not be negative")
    job = _held(JOB, work_id, lease_token)
    end = job.log_size
    if offset > end:
        raise Error.invalid_argument("offset", f"leaves a gap: the log ends at {end}, got {offset}")
    fresh = data[end - offset :]
    if not fresh:
        return end
    JobLogChunk.objects.create(job=job, offset=end, data=fresh)
    job.log_size = end + len(fresh)
    cut = job.log_size - settings.JOBS_MAX_LOG_BYTES
    if cut > job.log_start:
        _drop_before(job, cut)
        job.log_start = cut
    job.save(update_fields=["log_size", "log_start"])
    job_events.logs_appended(job)
    return job.log_size


def _drop_before(job: Job, cut: int) -> None:
    """Keeps the tail: chunks wholly before `cut` go, the one it falls in is trimmed."""
    chunks = JobLogChunk.objects.filter(job=job, offset__lt=cut).order_by("-offset")
    straddling = chunks.first()
    if straddling is None:
        return
    JobLogChunk.objects.filter(job=job, offset__lt=straddling.offset).delete()
    data = bytes(straddling.data)
    if straddling.offset + len(data) <= cut:
        straddling.delete()
    else:
        JobLogChunk.objects.filter(pk=straddling.pk).update(offset=cut, data=data[cut - straddling.offset :])


def _held(kind: Kind, work_id: str, lease_token: str, *, finishing: bool = False):
    """The work's row, locked, if `lease_token` holds its lease (or, finishing, held it last)."""
    row = (
        kind.model.objects.select_for_update(of=("self",))
        .select_related("namespace")
        .filter(**{kind.id_field: work_id})
        .first()
    )
    if row is None:
        if kind is SANDBOX and finishing:
            return None  # deleted, and its last lease already ended
        raise _not_held(work_id)  # deleted meanwhile (its namespace was): the runner stops it
    if not secrets.compare_digest(row.lease_digest, token_digest(lease_token)):
        raise _not_held(work_id)
    if not finishing and row.lease_expires_at is None:
        raise _not_held(work_id)
    return row


# --- FinishWork ----------------------------------------------------------------------

_RESULTS = {value: name.removeprefix("RESULT_").lower() for name, value in pb.Result.items()}


@transaction.atomic
def finish_work(
    *,
    principal: Principal,
    work_id: str,
    lease_token: str,
    result: int,
    exit_code: int = 0,
    signal_number: int = 0,
    reason: str = "",
    image_digest: str = "",
) -> None:
    """Records the outcome and ends the lease. The same token and outcome again: OK, no change."""
    kind = kind_of(work_id)
    if result not in _RESULTS or result == pb.RESULT_UNSPECIFIED:
        raise Error.invalid_argument("result", "is required: one of the Result values")
    allowed = {
        JOB: {pb.RESULT_EXITED, pb.RESULT_CANCELLED, pb.RESULT_TIMED_OUT, pb.RESULT_ERROR, pb.RESULT_RELEASED},
        SANDBOX: {pb.RESULT_STOPPED, pb.RESULT_EXITED, pb.RESULT_CANCELLED, pb.RESULT_ERROR, pb.RESULT_RELEASED},
        BUILD: {pb.RESULT_BUILT, pb.RESULT_ERROR, pb.RESULT_RELEASED},
    }[kind]
    if result not in allowed:
        raise Error.invalid_argument("result", f"{pb.Result.Name(result)} does not end a {kind.what}")
    if result == pb.RESULT_BUILT and not image_digest:
        raise Error.invalid_argument("imageDigest", "is required with RESULT_BUILT")
    row = _held(kind, work_id, lease_token, finishing=True)
    if row is None:
        return
    outcome = _RESULTS[result]
    if row.lease_expires_at is None:  # ended already: a retry is OK, another outcome is not
        if row.result == outcome:
            return
        raise Error.failed_precondition(f"{kind.what} {work_id!r} already finished ({row.result or 'lease lost'})")
    row.result = outcome
    row.lease_expires_at = None
    reason = reason.strip()
    if kind is JOB:
        _finish_job(principal, row, result, exit_code, signal_number, reason)
    elif kind is SANDBOX:
        _finish_sandbox(principal, row, result, exit_code, reason)
    else:
        _finish_build(principal, row, result, reason, image_digest)


def _finish_job(principal, job: Job, result: int, exit_code: int, signal_number: int, reason: str) -> None:
    now = timezone.now()
    if result == pb.RESULT_RELEASED:
        _requeue(job, reason or "released by its runner")
        job.attempt -= 1  # handed back unfinished: that run does not count
        job.save()
        job_events.changed(job)
        signal.announce()
        _audit(principal, JOB, job, "release", reason=job.reason)
        return
    job.finished_at = now
    if result == pb.RESULT_EXITED:
        job.exit_code = exit_code
        if exit_code == 0 and not signal_number:
            job.state, job.reason = Job.State.SUCCEEDED, ""
        else:
            job.state = Job.State.FAILED
            job.reason = f"killed by signal {signal_number}" if signal_number else f"exited with code {exit_code}"
    elif result == pb.RESULT_CANCELLED:
        job.state = Job.State.CANCELLED
        job.reason = job.reason or reason or "cancelled"
    elif result == pb.RESULT_TIMED_OUT:
        job.state, job.reason = Job.State.FAILED, reason or f"timed out after {job.timeout_seconds} s"
    else:
        job.state, job.reason = Job.State.FAILED, reason or "the runner could not run it"
    job.save()
    job_events.changed(job)
    _audit(principal, JOB, job, "finish", state=job.state, exit_code=job.exit_code, reason=job.reason)


def _finish_sandbox(principal, sandbox: Sandbox, result: int, exit_code: int, reason: str) -> None:
    if sandbox.cancel_requested:  # deleted: its container is gone now, and so is the sandbox
        _audit(principal, SANDBOX, sandbox, "stopped")
        sandbox.delete()
        return
    if result == pb.RESULT_RELEASED:
        _revoke_agent_key(principal, sandbox)
        sandbox.state, sandbox.reason = Sandbox.State.PENDING, reason or "released by its runner"
        sandbox.attempt -= 1
        sandbox.save()
        signal.announce()
    elif result == pb.RESULT_ERROR:
        _revoke_agent_key(principal, sandbox)
        sandbox.state, sandbox.reason = Sandbox.State.FAILED, reason or "the runner could not run it"
        sandbox.save()
    else:
        _revoke_agent_key(principal, sandbox)
        stopped = f"exited with code {exit_code}" if result == pb.RESULT_EXITED else "stopped"
        sandbox.state, sandbox.reason = Sandbox.State.STOPPED, reason or stopped
        sandbox.save()
    _audit(principal, SANDBOX, sandbox, "finish", state=sandbox.state, reason=sandbox.reason)


def _finish_build(principal, environment: Environment, result: int, reason: str, image_digest: str) -> None:
    if result == pb.RESULT_RELEASED:
        environment.attempt -= 1
        environment.reason = reason or "released by its runner"
        environment.save()
        signal.announce()
        return
    if result == pb.RESULT_BUILT:
        environment.state, environment.image_digest, environment.reason = Environment.State.READY, image_digest, ""
    else:
        environment.state, environment.reason = Environment.State.FAILED, reason or "the build failed"
    environment.save()
    _audit(principal, BUILD, environment, "build_finish", state=environment.state, reason=environment.reason)


def _requeue(row, reason: str) -> None:
    row.lease_expires_at = None
    row.cancel_requested = False
    row.reason = reason
    if isinstance(row, Job):
        row.state, row.started_at = Job.State.QUEUED, None


def _revoke_agent_key(principal: Principal, sandbox: Sandbox) -> None:
    if sandbox.agent_key_id is not None and sandbox.agent_key.revoked_at is None:
        revoke_api_key(actor=principal, key_id=sandbox.agent_key.key_id)


def _audit(principal: Principal, kind: Kind, row, verb: str, **changes) -> None:
    public_id = getattr(row, kind.id_field)
    record(
        actor=principal,
        action=f"{kind.what}.{verb}",
        target=f"{kind.what}:{public_id}",
        namespace=row.namespace.name,
        changes={k: v for k, v in changes.items() if v not in (None, "")},
    )


# --- Lost leases ---------------------------------------------------------------------


def lose(principal: Principal, kind: Kind, row, why: str) -> None:
    """The lease on `row` (locked) ended without an outcome: its runner is gone or revoked.

    Jobs and builds are queued again while attempts remain (JOBS_MAX_ATTEMPTS), else FAILED;
    a sandbox ends FAILED (or, deleted meanwhile, is removed)."""
    row.lease_expires_at = None
    row.result = ""
    if kind is SANDBOX:
        _revoke_agent_key(principal, row)
        if row.cancel_requested:
            _audit(principal, kind, row, "lease_lost", reason=why)
            row.delete()
            return
        row.state, row.reason = Sandbox.State.FAILED, f"runner lost ({why})"
    elif kind is JOB and row.cancel_requested:
        row.state, row.reason, row.finished_at = Job.State.CANCELLED, f"cancelled; runner lost ({why})", timezone.now()
    elif row.attempt < settings.JOBS_MAX_ATTEMPTS:
        _requeue(row, f"runner lost ({why}) on attempt {row.attempt}; queued again")
        signal.announce()
    else:
        row.state = Job.State.FAILED if kind is JOB else Environment.State.FAILED
        row.reason = f"runner lost ({why}) on attempt {row.attempt} of {settings.JOBS_MAX_ATTEMPTS}"
        if kind is JOB:
            row.finished_at = timezone.now()
    row.save()
    if kind is JOB:
        job_events.changed(row)
    _audit(principal, kind, row, "lease_lost", state=row.state, reason=row.reason)


def reap_expired(*, principal: Principal, limit: int = REAP_BATCH) -> int:
    """Loses up to `limit` expired leases of each kind; how many were lost."""
    lost = 0
    for kind in KINDS:
        overdue = kind.model.objects.filter(lease_expires_at__lt=timezone.now())
        if kind.leased_in:
            overdue = overdue.filter(state__in=kind.leased_in)
        if not overdue.exists():  # the usual answer: one indexed look, no transaction
            continue
        with transaction.atomic():
            rows = (
                overdue.select_for_update(skip_locked=True, of=("self",))
                .select_related("namespace")
                .order_by("lease_expires_at")[:limit]
            )
            expired = 0
            for row in rows:
                lose(principal, kind, row, "lease expired")
                expired += 1
            if expired:  # counted only if the losses commit
                transaction.on_commit(partial(record_lease_expiries, kind.label, expired))
        lost += expired
    return lost


def lose_all_of(principal: Principal, runner: Runner, why: str) -> int:
    """Ends every lease `runner` holds (it was revoked); call inside a transaction."""
    lost = 0
    for kind in KINDS:
        rows = kind.model.objects.select_for_update(of=("self",)).select_related("namespace")
        for row in rows.filter(runner=runner, lease_expires_at__isnull=False):
            lose(principal, kind, row, why)
            lost += 1
    return lost


_last_reap = -1e9


def _reap_now_and_then(principal: Principal) -> None:
    global _last_reap
    now = time.monotonic()
    if now - _last_reap >= REAP_EVERY_SECONDS:
        _last_reap = now
        reap_expired(principal=principal)
