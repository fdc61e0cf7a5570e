"""The lease service in process: statements, log cap, sandboxes' keys, lost leases, commands, console."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apikeys.models import ApiKey
from containers.runtime.v1 import runner_pb2 as pb
from controlplane.auth import Kind, Principal, Role
from controlplane.errors import Error
from runners.models import Runner
from runners.services import issue_runner
from workloads import selectors
from workloads.models import Job, Sandbox
from workloads.services import jobs, leases, sandboxes

pytestmark = pytest.mark.django_db
SYSTEM = Principal.system("tests")


@pytest.fixture
def runner(namespace):
    record, _ = issue_runner(actor=SYSTEM, name="runner")
    return record, Principal(kind=Kind.RUNNER, key_id=record.key.key_id)


def acquire(runner, *kinds):
    record, principal = runner
    return leases.claim(principal, record, kinds or leases.KINDS)


def heartbeat(runner, work, **kwargs):
    return leases.heartbeat(principal=runner[1], work_id=work.work_id, lease_token=work.lease_token, **kwargs)


def test_a_heartbeat_is_one_statement_that_also_records_the_runner_as_seen(runner):
    jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox")
    work = acquire(runner)
    Runner.objects.filter(pk=runner[0].pk).update(last_seen_at=None)
    leases._seen.clear()  # SQLite's per-process throttle
    with CaptureQueriesContext(connection) as captured:
        heartbeat(runner, work, running=True)
    assert Runner.objects.get(pk=runner[0].pk).last_seen_at is not None
    if connection.vendor == "postgresql":  # a data-modifying CTE: one round trip
        assert len(captured) == 1 and captured[0]["sql"].startswith("WITH lease AS (UPDATE")
    else:  # in process, so a second statement costs no round trip
        assert [q["sql"].split()[0] for q in captured] == ["UPDATE", "UPDATE"]


def test_a_heartbeat_writes_last_seen_at_most_once_per_resolution(runner, settings):
    settings.RUNNER_LAST_SEEN_RESOLUTION_SECONDS = 60
    jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox")
    work = acquire(runner)
    heartbeat(runner, work)
    first = Runner.objects.get(pk=runner[0].pk).last_seen_at
    heartbeat(runner, work)
    assert Runner.objects.get(pk=runner[0].pk).last_seen_at == first


def test_a_heartbeat_on_a_lease_not_held_writes_nothing(runner):
    jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox")
    work = acquire(runner)
    Runner.objects.filter(pk=runner[0].pk).update(last_seen_at=None)
    leases._seen.clear()
    with pytest.raises(Error) as refused:
        leases.heartbeat(principal=runner[1], work_id=work.work_id, lease_token="not-the-token")
    assert refused.value.code.wire_name == "failed_precondition"
    assert Runner.objects.get(pk=runner[0].pk).last_seen_at is None


def test_an_idle_claim_and_reap_are_one_statement_each_kind(runner):
    # What idle runners cost: with nothing queued or expired, a claim runs one precompiled
    # SELECT per kind, and the reaper one indexed look per kind with no transaction.
    with CaptureQueriesContext(connection) as captured:
        assert acquire(runner) is None
    selects = [q["sql"] for q in captured if q["sql"].startswith("SELECT")]
    assert len(selects) == len(leases.KINDS)
    with CaptureQueriesContext(connection) as captured:
        assert leases.reap_expired(principal=SYSTEM) == 0
    assert [q["sql"].split()[0] for q in captured] == ["SELECT"] * len(leases.KINDS)


def test_a_runner_limited_to_namespaces_claims_only_their_work(namespace, other_namespace):
    record, _ = issue_runner(actor=SYSTEM, name="limited", namespaces=["team-a"])
    limited = (record, Principal(kind=Kind.RUNNER, key_id=record.key.key_id))
    elsewhere = jobs.run_job(actor=SYSTEM, namespace=other_namespace.name, image="busybox")
    assert acquire(limited, leases.JOB) is None
    mine = jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox")
    assert acquire(limited, leases.JOB).work_id == mine.job_id
    assert Job.objects.get(pk=elsewhere.pk).state == Job.State.QUEUED


def test_the_log_keeps_its_tail_within_the_cap(runner, settings):
    settings.JOBS_MAX_LOG_BYTES = 10
    job = jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox")
    work = acquire(runner)
    assert leases.append_logs(work_id=work.work_id, lease_token=work.lease_token, offset=0, data=b"01234567") == 8
    assert leases.append_logs(work_id=work.work_id, lease_token=work.lease_token, offset=8, data=b"89abcdef") == 16
    job.refresh_from_db()
    assert (job.log_start, job.log_size) == (6, 16)
    page = selectors.job_logs(job, 0)
    assert (page.data, page.next_offset, page.first_offset, page.complete) == (b"6789abcdef", 16, 6, False)
    with pytest.raises(Exception, match="at most 1048576 bytes"):
        leases.append_logs(work_id=work.work_id, lease_token=work.lease_token, offset=16, data=b"x" * (1024 * 1024 + 1))


def test_a_page_never_ends_inside_a_character(runner, settings, monkeypatch):
    monkeypatch.setattr(selectors, "MAX_LOG_READ", 4)
    job = jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox")
    work = acquire(runner)
    leases.append_logs(work_id=work.work_id, lease_token=work.lease_token, offset=0, data="abcé!".encode())
    job.refresh_from_db()
    first = selectors.job_logs(job, 0)
    assert first.data == b"abc" and selectors.job_logs(job, first.next_offset).data == "é!".encode()


def test_run_job_timeout_is_validated(namespace, settings):
    settings.JOBS_MAX_TIMEOUT_SECONDS = 60
    with pytest.raises(Exception, match="timeoutSeconds") as refused:
        jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox", timeout_seconds=61)
    assert refused.value.code.wire_name == "invalid_argument"
    assert jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox", timeout_seconds=60).timeout_seconds == 60


def test_a_released_sandbox_gets_a_new_key_and_the_old_one_is_revoked(runner, settings):
    settings.CONTAINERS_SANDBOXES_ENABLED = True
    sandbox = sandboxes.create_sandbox(actor=SYSTEM, namespace="team-a", image="busybox")
    first = acquire(runner, leases.SANDBOX)
    leases.finish_work(
        principal=runner[1], work_id=first.work_id, lease_token=first.lease_token, result=pb.RESULT_RELEASED
    )
    second = acquire(runner, leases.SANDBOX)
    assert second.attempt == 1 and second.agent_key != first.agent_key
    keys = ApiKey.objects.filter(sandbox_id=sandbox.sandbox_id)
    assert sorted(k.revoked_at is None for k in keys) == [False, True]


def test_a_lost_sandbox_fails_and_its_key_is_revoked(runner, settings):
    settings.CONTAINERS_SANDBOXES_ENABLED = True
    sandbox = sandboxes.create_sandbox(actor=SYSTEM, namespace="team-a", image="busybox")
    acquire(runner, leases.SANDBOX)
    Sandbox.objects.filter(pk=sandbox.pk).update(lease_expires_at="2000-01-01T00:00:00Z")
    out = io.StringIO()
    call_command("reap_leases", stdout=out)
    assert out.getvalue().strip() == "1 lease(s) ended"
    sandbox.refresh_from_db()
    assert (sandbox.state, sandbox.reason) == (Sandbox.State.FAILED, "runner lost (lease expired)")
    assert ApiKey.objects.get(sandbox_id=sandbox.sandbox_id).revoked_at is not None


def test_runner_commands(namespace):
    out, err = io.StringIO(), io.StringIO()
    call_command("issue_runner_key", "--name", "host-7", "--namespace", "team-a", stdout=out, stderr=err)
    plaintext = out.getvalue().strip().splitlines()[-1]
    runner = Runner.objects.get()
    assert plaintext.startswith("cpk_") and runner.namespaces == ["team-a"] and runner.runner_id in err.getvalue()
    assert runner.key.kind == ApiKey.Kind.RUNNER and plaintext not in runner.key.digest
    listed = io.StringIO()
    call_command("list_runners", stdout=listed)
    assert listed.getvalue().startswith(f"{runner.runner_id}\tactive\tnever\t0\tteam-a\thost-7")
    call_command("revoke_runner", runner.runner_id, stdout=io.StringIO())
    listed = io.StringIO()
    call_command("list_runners", stdout=listed)
    assert "\trevoked\t" in listed.getvalue()


def test_console_shows_runners_and_a_jobs_outcome_and_log_tail(client, runner, django_user_model):
    job = jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox", command=["false"])
    work = acquire(runner)
    leases.append_logs(work_id=work.work_id, lease_token=work.lease_token, offset=0, data=b"it broke\n")
    leases.finish_work(
        principal=runner[1], work_id=work.work_id, lease_token=work.lease_token, result=pb.RESULT_EXITED, exit_code=1
    )
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.test", "x"))
    listing = client.get("/admin/runners/runner/").content.decode()
    assert runner[0].runner_id in listing and "Work held" in listing
    page = client.get(f"/admin/containers/job/{job.pk}/change/").content.decode()
    assert "it broke" in page and "exited with code 1" in page
    issue = client.post("/admin/runners/runner/issue/", {"name": "from the console", "namespaces": "team-a"})
    assert issue.status_code == 200 and "cpk_" in issue.content.decode()
    assert Runner.objects.filter(name="from the console", namespaces=["team-a"]).exists()
    assert Job.objects.get(pk=job.pk).state == Job.State.FAILED


def test_viewer_reads_logs_over_rpc_and_another_namespace_cannot(rpc, runner, make_key, other_namespace):
    job = jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox")
    work = acquire(runner)
    leases.append_logs(work_id=work.work_id, lease_token=work.lease_token, offset=0, data=b"hello\n")
    path = "containers.api.v1.JobService/GetJobLogs"
    page = rpc(path, {"jobId": job.job_id}, token=make_key("team-a", Role.VIEWER)).body
    assert page == {"data": "hello\n", "nextOffset": "6"}
    assert rpc(path, {"jobId": job.job_id}, token=make_key("team-b", Role.VIEWER)).code == "permission_denied"
    past = rpc(path, {"jobId": job.job_id, "offset": 7}, token=make_key("team-a", Role.VIEWER))
    assert past.code == "invalid_argument" and "offset" in past.body["message"]
