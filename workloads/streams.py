"""WatchJobs and FollowJobLogs: a namespace's job change log (services.job_events) and a
job's output, read as they grow (docs/streams.md).

Reads only, in autocommit: each look is one or two short queries, and between looks the
stream holds no connection (controlplane.rpc.streams.Stream.idle) and sleeps until NOTIFY
says its namespace or job changed.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial

from django.conf import settings
from django.db import connection, transaction

from containers.api.v1 import job_pb2 as pb
from controlplane.auth import Principal
from controlplane.errors import Code, Error
from controlplane.rpc.streams import Stream
from namespaces.models import Namespace

from . import selectors
from .converters import job_from_snapshot, job_to_proto, may_read_env
from .models import Job, JobEvent, JobEventCounter
from .services import job_events, signal

BATCH = 500  # events or initial jobs per query

_TYPES = {JobEvent.Type.ADDED: pb.WATCH_EVENT_TYPE_ADDED, JobEvent.Type.MODIFIED: pb.WATCH_EVENT_TYPE_MODIFIED}


def watch_jobs(
    *, reader: Callable[[], Principal], namespace: str, resume_token: str, stream: Stream, job_id: str = ""
) -> Iterator[pb.WatchJobsResponse]:
    """`job_id`: only that job's events. The stream still reads (and shares) the namespace's
    change log and keeps the namespace's position, so its tokens work for either kind of watch."""
    ns = _namespace(namespace)
    if job_id and not Job.objects.filter(namespace=ns, job_id=job_id).exists():
        raise Error.not_found(f"job {job_id!r} not found in namespace {ns.name!r}")
    waker = signal.signal_for(signal.JOBS)
    key = job_events.namespace_key(ns.pk)
    with _interest(waker, key):
        if resume_token:
            after = _resume_position(ns, resume_token)
        else:
            after = yield from _initial_state(ns, reader(), job_id)
            stream.sent()
        while True:
            ticket = waker.ticket(key) if waker else 0
            with_env = may_read_env(reader(), ns.name)
            load = partial(_events_after, ns, after, with_env=with_env)
            # Without NOTIFY (no tickets) each stream reads for itself.
            events = shared_reads.read((ns.pk, with_env), after, ticket, load) if waker else load()
            sent = False
            for seq, kind, job in events:
                after = seq
                if not job_id or job.job_id == job_id:
                    yield pb.WatchJobsResponse(type=_TYPES[kind], job=job, resume_token=str(seq))
                    sent = True
            if sent:
                stream.sent()
            if len(events) == BATCH:
                continue  # more may be waiting: read on before sleeping
            if stream.over():
                return
            if stream.keepalive_due():
                _still_there(ns, after)
                yield pb.WatchJobsResponse(type=pb.WATCH_EVENT_TYPE_BOOKMARK, resume_token=str(after))
                stream.sent()
            stream.idle(waker, key, ticket)


def follow_job_logs(*, job: Job, offset: int, stream: Stream) -> Iterator[pb.FollowJobLogsResponse]:
    waker = signal.signal_for(signal.JOBS)
    key = job_events.job_key(job.pk)
    first = True  # the first look always answers: the position, even before any output
    with _interest(waker, key):
        while True:
            ticket = waker.ticket(key) if waker else 0
            job = Job.objects.get(pk=job.pk)  # its size and state now
            page = selectors.job_logs(job, offset)
            if page.data or page.complete or first:
                first = False
                offset = page.next_offset
                yield pb.FollowJobLogsResponse(
                    data=page.data.decode("utf-8", errors="replace"),
                    next_offset=page.next_offset,
                    complete=page.complete,
                    first_offset=page.first_offset,
                )
                stream.sent()
                if page.complete:
                    return
                if offset < job.log_size:
                    continue  # more than one page was waiting
            if stream.over():
                return
            if stream.keepalive_due():
                yield pb.FollowJobLogsResponse(next_offset=offset, first_offset=job.log_start)
                stream.sent()
            stream.idle(waker, key, ticket)


class SharedReads:
    """The streams of one process that wake for the same change read it once.

    A notification wakes every watch of its namespace at once; instead of each making the
    same query, the first starts it and the others use its rows. A stream may use a read
    only if the read began after the notifications the stream knows of: its ticket (the
    signal's generation of the namespace) is at most the one the read began at."""

    @dataclass
    class _Read:
        ticket: int
        after: int
        done: threading.Event = field(default_factory=threading.Event)
        rows: list | None = None

    def __init__(self):
        self._lock = threading.Lock()
        self._latest: dict = {}  # key → the latest read

    def read(self, key, after: int, ticket: int, load: Callable[[], list]) -> list:
        with self._lock:
            latest = self._latest.get(key)
            lead = latest is None or latest.after != after or latest.ticket < ticket
            if lead:
                latest = self._latest[key] = self._Read(ticket, after)
        if lead:
            try:
                latest.rows = load()
            finally:
                latest.done.set()
            return latest.rows
        latest.done.wait()
        return latest.rows if latest.rows is not None else load()  # the leader failed: read alone


shared_reads = SharedReads()


def _interest(waker, key: str):
    return waker.interest(key) if waker is not None else contextlib.nullcontext()


def _namespace(name: str) -> Namespace:
    ns = Namespace.objects.filter(name=name).first()
    if ns is None:
        raise Error.not_found(f"namespace {name!r} not found")
    return ns


def _initial_state(ns: Namespace, reader: Principal, job_id: str = "") -> Iterator[pb.WatchJobsResponse]:
    """One ADDED per job (or for `job_id` only), then a BOOKMARK; returns the position the
    changes continue from.

    The jobs and the position are read in one snapshot (REPEATABLE READ on PostgreSQL; a
    SQLite transaction is one), so no change is both in the list and after the position."""
    # Inside a caller's transaction (a test's) the isolation level is that transaction's.
    own_transaction = not connection.in_atomic_block
    with transaction.atomic():
        if connection.vendor == "postgresql" and own_transaction:
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        last = _last_seq(ns)
        after_id = 0
        while True:
            jobs = Job.objects.filter(namespace=ns, id__gt=after_id).select_related("namespace")
            if job_id:
                jobs = jobs.filter(job_id=job_id)
            page = list(jobs.order_by("id")[:BATCH])
            for job in page:
                yield pb.WatchJobsResponse(type=pb.WATCH_EVENT_TYPE_ADDED, job=job_to_proto(job, reader))
            if len(page) < BATCH:
                break
            after_id = page[-1].id
    yield pb.WatchJobsResponse(type=pb.WATCH_EVENT_TYPE_BOOKMARK, resume_token=str(last))
    return last


def _events_after(ns: Namespace, after: int, *, with_env: bool) -> list[tuple[int, str, pb.Job]]:
    fields = ["seq", "type", "snapshot"] + (["job__env"] if with_env else [])
    rows = list(JobEvent.objects.filter(namespace=ns, seq__gt=after).order_by("seq").values_list(*fields)[:BATCH])
    if rows and rows[0][0] != after + 1:
        raise _expired(after)  # trimmed while this stream lagged behind
    return [(row[0], row[1], job_from_snapshot(row[2], row[3] if with_env else None)) for row in rows]


def _last_seq(ns: Namespace) -> int:
    return JobEventCounter.objects.filter(namespace=ns).values_list("last", flat=True).first() or 0


def _resume_position(ns: Namespace, token: str) -> int:
    if not token.isascii() or not token.isdigit():
        raise Error.invalid_argument("resumeToken", "is not a token WatchJobs returned")
    after = int(token)
    last = _last_seq(ns)
    if after > last:
        raise Error.invalid_argument("resumeToken", "is ahead of this namespace's changes (from another namespace?)")
    _check_kept(ns, after, last)
    return after


def _still_there(ns: Namespace, after: int) -> None:
    """A quiet stream's periodic check: its namespace exists, and its position is still kept."""
    if not Namespace.objects.filter(pk=ns.pk).exists():
        raise Error.not_found(f"namespace {ns.name!r} not found (deleted)")
    _check_kept(ns, after, _last_seq(ns))


def _check_kept(ns: Namespace, after: int, last: int) -> None:
    first = JobEvent.objects.filter(namespace=ns).order_by("seq").values_list("seq", flat=True).first()
    oldest_kept = first if first is not None else last + 1
    if after < oldest_kept - 1:
        raise _expired(after)


def _expired(after: int) -> Error:
    return Error(
        Code.OUT_OF_RANGE,
        f"resume token {after} is older than the job changes kept (JOBS_WATCH_RETENTION_SECONDS="
        f"{settings.JOBS_WATCH_RETENTION_SECONDS}): watch again without a resume token",
    )
