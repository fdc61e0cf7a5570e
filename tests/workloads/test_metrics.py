"""The workloads' metrics: work and leases read at scrape time, lease expiries and job outcomes
counted once, when their transaction commits."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from prometheus_client import REGISTRY

from containers.runtime.v1 import runner_pb2 as pb
from controlplane.auth import Principal
from controlplane.observability.collectors import scrape_time_collectors
from controlplane.observability.exposition import exposition
from workloads.models import Job
from workloads.services import jobs, leases, sandboxes

from . import test_leases

pytestmark = pytest.mark.django_db
SYSTEM = Principal.system("tests")
runner, acquire = test_leases.runner, test_leases.acquire  # the lease tests' fixture: a runner, its principal


def value(name: str, **labels) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def expire(work: pb.Work) -> None:
    Job.objects.filter(job_id=work.work_id).update(lease_expires_at=timezone.now() - timedelta(seconds=1))


def finish(runner, work: pb.Work, result=pb.RESULT_EXITED, exit_code: int = 0) -> None:
    leases.finish_work(
        principal=runner[1], work_id=work.work_id, lease_token=work.lease_token, result=result, exit_code=exit_code
    )


def test_work_and_leases_are_read_at_scrape_time_in_one_query(runner, settings):
    settings.CONTAINERS_SANDBOXES_ENABLED = True
    settings.METRICS_QUERY_CACHE_SECONDS = 60
    for _ in range(4):
        jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox")
    acquire(runner, leases.JOB)  # held
    expire(acquire(runner, leases.JOB))  # held, overdue: not reaped yet
    sandboxes.create_sandbox(actor=SYSTEM, namespace="team-a", image="busybox")
    scrape_time_collectors.cache_clear()  # fresh collectors: nothing cached by an earlier test

    with CaptureQueriesContext(connection) as first:
        text = exposition().decode()
    for line in (
        'controlplane_work_queued{kind="job"} 2.0',
        'controlplane_work_queued{kind="sandbox"} 1.0',
        'controlplane_work_queued{kind="build"} 0.0',
        'controlplane_leases_held{kind="job"} 2.0',
        'controlplane_leases_held{kind="sandbox"} 0.0',
        'controlplane_leases_overdue{kind="job"} 1.0',
        'controlplane_jobs{state="queued"} 2.0',
        'controlplane_jobs{state="running"} 2.0',
    ):
        assert line in text.splitlines(), line
    # Three statements per scrape in all: jobs by state, work and leases, runners.
    assert len(first) == 3, [q["sql"] for q in first]
    jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox")
    with CaptureQueriesContext(connection) as second:
        again = exposition().decode()
    assert len(second) == 0 and 'controlplane_work_queued{kind="job"} 2.0' in again  # the cached answer


def test_a_lease_reaped_for_expiry_is_counted_once_when_it_commits(runner, django_capture_on_commit_callbacks):
    jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox")
    expire(acquire(runner, leases.JOB))
    before = value("controlplane_lease_expiries_total", kind="job")
    with pytest.raises(RuntimeError), django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        assert leases.reap_expired(principal=SYSTEM) == 1
        raise RuntimeError("rolled back")
    assert value("controlplane_lease_expiries_total", kind="job") == before
    with django_capture_on_commit_callbacks(execute=True):
        assert leases.reap_expired(principal=SYSTEM) == 1
        assert leases.reap_expired(principal=SYSTEM) == 0
    assert value("controlplane_lease_expiries_total", kind="job") == before + 1
    # Every kind is exported from the start, so a rate() has its zero.
    assert REGISTRY.get_sample_value("controlplane_lease_expiries_total", {"kind": "build"}) is not None


def test_a_job_outcome_is_counted_once_despite_a_retried_finish_or_a_rollback(
    runner, django_capture_on_commit_callbacks
):
    jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox")
    work = acquire(runner, leases.JOB)
    before = value("controlplane_job_outcomes_total", outcome="succeeded")
    with pytest.raises(RuntimeError), django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        finish(runner, work)
        raise RuntimeError("rolled back")
    assert value("controlplane_job_outcomes_total", outcome="succeeded") == before
    with django_capture_on_commit_callbacks(execute=True):
        finish(runner, work)
        finish(runner, work)  # the runner's retry: OK, no change
    assert Job.objects.get(job_id=work.work_id).state == Job.State.SUCCEEDED
    assert value("controlplane_job_outcomes_total", outcome="succeeded") == before + 1


def test_cancelled_and_lost_jobs_count_as_outcomes(runner, settings, django_capture_on_commit_callbacks):
    settings.JOBS_MAX_ATTEMPTS = 1
    queued = jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox")
    cancelled, failed = (value("controlplane_job_outcomes_total", outcome=o) for o in ("cancelled", "failed"))
    with django_capture_on_commit_callbacks(execute=True):
        jobs.cancel_job(actor=SYSTEM, job_id=queued.job_id)
        jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox")
        expire(acquire(runner, leases.JOB))
        leases.reap_expired(principal=SYSTEM)  # no attempt left: failed
        running = jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox")
        acquire(runner, leases.JOB)
        jobs.cancel_job(actor=SYSTEM, job_id=running.job_id)  # only asked: not final yet
    assert value("controlplane_job_outcomes_total", outcome="cancelled") == cancelled + 1
    assert value("controlplane_job_outcomes_total", outcome="failed") == failed + 1
