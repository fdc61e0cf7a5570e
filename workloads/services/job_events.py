"""The job change log WatchJobs streams (workloads.streams): every write that changes a job
calls `changed` in its transaction, so the change and its event commit together or not at all.

Each namespace numbers its changes 1, 2, 3, … (JobEvent.seq). The number comes from the
namespace's JobEventCounter row, whose lock the writer holds until it commits: changes of a
namespace commit in sequence order, so a watcher that has read up to N and finds N+1 has
missed nothing. Events older than JOBS_WATCH_RETENTION_SECONDS are trimmed (at most every
TRIM_EVERY_SECONDS per process, by the writers); a watcher resuming from before them is told
to start again (failed_precondition).
"""

from __future__ import annotations

import time
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from controlplane.observability.metrics import record_job_outcome

from ..converters import job_snapshot
from ..models import Job, JobEvent, JobEventCounter
from . import signal

TRIM_EVERY_SECONDS = 60.0


def changed(job: Job, *, added: bool = False) -> JobEvent:
    """Records the job as it is now (saved, in the current transaction) as its namespace's
    next change, and wakes its watchers and log followers once the transaction commits."""
    event = JobEvent.objects.create(
        namespace_id=job.namespace_id,
        seq=_next_seq(job.namespace_id),
        job=job,
        type=JobEvent.Type.ADDED if added else JobEvent.Type.MODIFIED,
        snapshot=job_snapshot(job),
    )
    signal.announce(signal.JOBS, namespace_key(job.namespace_id))
    signal.announce(signal.JOBS, job_key(job.pk))
    if job.state not in Job.ACTIVE_STATES:
        # A final state is final: no later write changes the job, so each job counts once.
        transaction.on_commit(partial(record_job_outcome, job.state))
    _trim_now_and_then()
    return event


def logs_appended(job: Job) -> None:
    """Wakes the job's log followers once the current transaction commits."""
    signal.announce(signal.JOBS, job_key(job.pk))


def namespace_key(namespace_pk: int) -> str:
    return f"ns:{namespace_pk}"


def job_key(job_pk: int) -> str:
    return f"job:{job_pk}"


def _next_seq(namespace_pk: int) -> int:
    # One statement, which takes the counter's row lock until commit (and creates the row).
    table = connection.ops.quote_name(JobEventCounter._meta.db_table)
    column = connection.ops.quote_name(JobEventCounter._meta.get_field("namespace").column)
    sql = (
        f"INSERT INTO {table} ({column}, last) VALUES (%s, 1) "  # noqa: S608 - names from the model
        f"ON CONFLICT ({column}) DO UPDATE SET last = {table}.last + 1 RETURNING last"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [namespace_pk])
        return cursor.fetchone()[0]


def trim() -> int:
    """Deletes the events older than JOBS_WATCH_RETENTION_SECONDS; how many."""
    cutoff = timezone.now() - timedelta(seconds=settings.JOBS_WATCH_RETENTION_SECONDS)
    deleted, _ = JobEvent.objects.filter(at__lt=cutoff).delete()
    return deleted


_last_trim = -1e9


def _trim_now_and_then() -> None:
    global _last_trim
    now = time.monotonic()
    if now - _last_trim >= TRIM_EVERY_SECONDS:
        _last_trim = now
        trim()
