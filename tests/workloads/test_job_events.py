"""The job change log behind WatchJobs: one event per job change, written in the change's own
transaction, numbered without gaps per namespace; trimmed after JOBS_WATCH_RETENTION_SECONDS."""

from __future__ import annotations

import pytest
from django.db import transaction

from containers.api.v1 import job_pb2 as pb
from containers.runtime.v1 import runner_pb2 as rpb
from controlplane.auth import Kind, Principal
from runners.services import issue_runner
from workloads.models import Job, JobEvent
from workloads.services import job_events, jobs, leases

pytestmark = pytest.mark.django_db

SYSTEM = Principal.system("tests")


def log(namespace: str = "team-a") -> list[tuple[int, str, str, int]]:
    rows = JobEvent.objects.filter(namespace__name=namespace).order_by("seq")
    return [(e.seq, e.type, e.job.job_id, pb.Job.FromString(bytes(e.snapshot)).state) for e in rows]


def test_every_change_of_a_job_is_one_event_in_commit_order(namespace, other_namespace):
    runner, _ = issue_runner(actor=SYSTEM, name="events runner")
    principal = Principal(kind=Kind.RUNNER, key_id=runner.key.key_id)
    first = jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox", env={"SECRET": "x"})
    jobs.run_job(actor=SYSTEM, namespace="team-b", image="busybox")  # another namespace: its own numbers
    work = leases.claim(principal, runner, [leases.JOB])
    leases.append_logs(work_id=work.work_id, lease_token=work.lease_token, offset=0, data=b"out\n")  # no event
    leases.finish_work(
        principal=principal, work_id=work.work_id, lease_token=work.lease_token, result=rpb.RESULT_EXITED, exit_code=0
    )
    second = jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox")
    jobs.cancel_job(actor=SYSTEM, job_id=second.job_id)
    assert log() == [
        (1, "added", first.job_id, pb.JOB_STATE_QUEUED),
        (2, "modified", first.job_id, pb.JOB_STATE_RUNNING),
        (3, "modified", first.job_id, pb.JOB_STATE_SUCCEEDED),
        (4, "added", second.job_id, pb.JOB_STATE_QUEUED),
        (5, "modified", second.job_id, pb.JOB_STATE_CANCELLED),
    ]
    assert [seq for seq, *_ in log("team-b")] == [1]
    snapshot = pb.Job.FromString(bytes(JobEvent.objects.filter(job__job_id=first.job_id).last().snapshot))
    assert dict(snapshot.env) == {"SECRET": ""}  # values stay on the job, for readers allowed them
    assert snapshot.exit_code == 0 and snapshot.HasField("exit_code")


def test_a_change_rolled_back_leaves_no_event_and_no_gap(namespace):
    with pytest.raises(RuntimeError), transaction.atomic():
        jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox")
        raise RuntimeError("rolled back")
    assert log() == [] and Job.objects.count() == 0
    job = jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox")
    assert log() == [(1, "added", job.job_id, pb.JOB_STATE_QUEUED)]


def test_a_lost_lease_is_an_event(namespace, settings):
    settings.RUNNER_LEASE_TTL_SECONDS = 0
    runner, _ = issue_runner(actor=SYSTEM, name="losing runner")
    principal = Principal(kind=Kind.RUNNER, key_id=runner.key.key_id)
    job = jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox")
    leases.claim(principal, runner, [leases.JOB])
    assert leases.reap_expired(principal=SYSTEM) == 1
    assert [state for *_, state in log()] == [pb.JOB_STATE_QUEUED, pb.JOB_STATE_RUNNING, pb.JOB_STATE_QUEUED]
    assert Job.objects.get(pk=job.pk).reason.startswith("runner lost")


def test_trim_keeps_the_retention(namespace, settings):
    jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox")
    settings.JOBS_WATCH_RETENTION_SECONDS = 3600
    assert job_events.trim() == 0
    settings.JOBS_WATCH_RETENTION_SECONDS = 0
    assert job_events.trim() == 1 and log() == []


@pytest.mark.django_db(transaction=True)
def test_a_namespace_lock_and_a_change_log_writer_never_deadlock(namespace):
    """RunJob locks the namespace, then takes the change log's counter; a runner's FinishWork takes
    the counter, then inserts an event whose foreign key reads the namespace. With the namespace
    locked FOR UPDATE those two waited on each other (PostgreSQL failed one: a 500); FOR NO KEY
    UPDATE lets the event's key check through. On SQLite the writers simply take turns."""
    import threading

    from django.db import connections

    from namespaces.services import lock_namespace

    job = jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox")
    locked, counted, errors = threading.Event(), threading.Event(), []

    def holder():  # RunJob's order: the namespace, then (after the other writer) the counter
        try:
            with transaction.atomic():
                lock_namespace("team-a")
                locked.set()
                counted.wait(2)  # the other writer holds the counter (and, before the fix, waits on us)
                job_events.changed(Job.objects.get(pk=job.pk))
        except Exception as exc:  # a deadlock would surface here or in the writer
            errors.append(exc)
        finally:
            connections.close_all()

    def writer():  # FinishWork's order: the counter, then the event (whose key reads the namespace)
        locked.wait(5)
        try:
            with transaction.atomic():
                seq = job_events._next_seq(job.namespace_id)
                counted.set()
                JobEvent.objects.create(
                    namespace_id=job.namespace_id, seq=seq, job_id=job.pk, type=JobEvent.Type.MODIFIED, snapshot=b""
                )
        except Exception as exc:
            errors.append(exc)
        finally:
            counted.set()
            connections.close_all()

    threads = [threading.Thread(target=holder), threading.Thread(target=writer)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors, errors
    assert [seq for seq, *_ in log()] == [1, 2, 3]  # RunJob's event, then both writers', no gaps
