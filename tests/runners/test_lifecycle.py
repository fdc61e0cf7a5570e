"""Runners lease work over the real HTTP API (gunicorn), with the generated client."""

from __future__ import annotations

import threading
import time

import pytest

from apikeys.models import ApiKey
from containers.runtime.v1 import runner_pb2 as pb
from controlplane.auth import Role
from runners.models import Runner
from runners.services import revoke_runner
from workloads.models import Job, Sandbox
from workloads.services import leases

from .conftest import SYSTEM, code_of

JOB = "containers.api.v1.JobService/"


def run(rpc_live, token, **body):
    return rpc_live("RunJob", {"namespace": "team-a", "image": "busybox", **body}, token)


@pytest.fixture
def user_api(server, namespace):
    import json
    import urllib.request

    def call(method, body, token, service=JOB):
        request = urllib.request.Request(
            server.url + "/" + service + method,
            data=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            return json.loads(error.read())

    return call


def test_exit_3_fails_with_its_code_and_logs_and_env_reach_the_work(make_runner, make_key, user_api):
    operator = make_key("team-a", Role.OPERATOR)
    job = run(user_api, operator, command=["sh", "-c", "echo hi; exit 3"], env={"GREETING": "hello"})["job"]
    runner = make_runner()
    work = runner.acquire(pb.WORK_KIND_JOB)
    assert (work.work_id, work.attempt, dict(work.env), work.log_offset) == (job["jobId"], 1, {"GREETING": "hello"}, 0)
    assert list(work.command) == ["sh", "-c", "echo hi; exit 3"] and work.heartbeat_interval.seconds == 1
    running = user_api("GetJob", {"jobId": job["jobId"]}, operator)["job"]
    assert running["state"] == "JOB_STATE_RUNNING" and running["attempt"] == 1 and "startTime" in running
    assert runner.heartbeat(work, running=True).cancel_requested is False
    assert runner.append(work, 0, b"hi\n") == 3
    assert runner.append(work, 0, b"hi\n") == 3  # a retried chunk is stored once
    assert code_of(lambda: runner.append(work, 10, b"x")) == "invalid_argument"  # a gap
    runner.finish(work, pb.RESULT_EXITED, exit_code=3)
    runner.finish(work, pb.RESULT_EXITED, exit_code=3)  # retried: OK
    assert code_of(lambda: runner.finish(work, pb.RESULT_ERROR)) == "failed_precondition"
    done = user_api("GetJob", {"jobId": job["jobId"]}, operator)["job"]
    assert (done["state"], done["exitCode"], done["reason"]) == ("JOB_STATE_FAILED", 3, "exited with code 3")
    viewer = make_key("team-a", Role.VIEWER)
    logs = user_api("GetJobLogs", {"jobId": job["jobId"]}, viewer)
    assert (logs["data"], logs["nextOffset"], logs["complete"]) == ("hi\n", "3", True)
    assert code_of(lambda: runner.heartbeat(work)) == "failed_precondition"  # the lease ended


def test_exit_0_succeeds(make_runner, make_key, user_api):
    operator = make_key("team-a", Role.OPERATOR)
    job = run(user_api, operator, command=["true"])["job"]
    runner = make_runner()
    work = runner.acquire()
    seen = Runner.objects.get(pk=runner.record.pk)
    assert seen.last_seen_at is not None and seen.version == "tests"  # AcquireWork.runner_version
    runner.finish(work, pb.RESULT_EXITED, exit_code=0)
    done = user_api("GetJob", {"jobId": job["jobId"]}, operator)["job"]
    assert (done["state"], done["exitCode"], "endTime" in done) == ("JOB_STATE_SUCCEEDED", 0, True)


def test_cancel_queued_at_once_and_running_through_the_runner(make_runner, make_key, user_api):
    operator = make_key("team-a", Role.OPERATOR)
    queued = run(user_api, operator)["job"]
    assert user_api("CancelJob", {"jobId": queued["jobId"]}, operator)["job"]["state"] == "JOB_STATE_CANCELLED"
    job = run(user_api, operator, command=["sleep", "60"])["job"]
    runner = make_runner()
    work = runner.acquire()
    assert work.work_id == job["jobId"]  # the cancelled one was never handed out
    asked = user_api("CancelJob", {"jobId": job["jobId"]}, operator)["job"]
    assert asked["state"] == "JOB_STATE_RUNNING"
    beat = runner.heartbeat(work, running=True)
    assert beat.cancel_requested and beat.grace_seconds > 0
    runner.finish(work, pb.RESULT_CANCELLED)
    done = user_api("GetJob", {"jobId": job["jobId"]}, operator)["job"]
    assert done["state"] == "JOB_STATE_CANCELLED" and done["reason"].startswith("cancelled by api_key:")


def test_lost_lease_requeues_then_fails_and_a_stale_token_is_refused(make_runner, make_key, user_api, settings):
    settings.JOBS_MAX_ATTEMPTS = 2  # as the server's (reaped here, in this process)
    operator = make_key("team-a", Role.OPERATOR)
    job = run(user_api, operator, timeout_seconds=5)["job"]
    first, second = make_runner(name="first"), make_runner(name="second")
    lost = first.acquire()
    assert lost.timeout_seconds == 5
    time.sleep(2.5)  # TTL 2 s: not renewed
    assert leases.reap_expired(principal=SYSTEM) == 1
    again = user_api("GetJob", {"jobId": job["jobId"]}, operator)["job"]
    assert again["state"] == "JOB_STATE_QUEUED" and "runner lost" in again["reason"]
    retry = second.acquire()
    assert (retry.work_id, retry.attempt) == (job["jobId"], 2)
    assert code_of(lambda: first.finish(lost, pb.RESULT_EXITED)) == "failed_precondition"
    assert code_of(lambda: first.heartbeat(lost)) == "failed_precondition"
    time.sleep(2.5)
    leases.reap_expired(principal=SYSTEM)  # JOBS_MAX_ATTEMPTS=2: the second loss is final
    failed = user_api("GetJob", {"jobId": job["jobId"]}, operator)["job"]
    assert failed["state"] == "JOB_STATE_FAILED" and failed["attempt"] == 2
    assert failed["reason"] == "runner lost (lease expired) on attempt 2 of 2"


def test_released_work_is_queued_again_without_burning_an_attempt(make_runner, make_key, user_api):
    operator = make_key("team-a", Role.OPERATOR)
    job = run(user_api, operator)["job"]
    runner = make_runner()
    runner.finish(runner.acquire(), pb.RESULT_RELEASED)
    assert runner.acquire().attempt == 1
    assert user_api("GetJob", {"jobId": job["jobId"]}, operator)["job"]["attempt"] == 1


def test_keys_stay_on_their_side(server, make_runner, make_key, user_api, admin_key):
    runner = make_runner()
    assert "permission_denied" in user_api("ListJobs", {"namespace": "team-a"}, runner.key)["code"]
    who = user_api("WhoAmI", {}, runner.key, service="containers.api.v1.IdentityService/")
    assert who["code"] == "permission_denied"
    for token in (admin_key, make_key("team-a", Role.OPERATOR)):
        assert code_of(type(runner)(server.url, token).acquire) == "permission_denied"


def test_a_namespace_limited_runner_gets_only_its_namespaces_work(make_runner, make_key, user_api, other_namespace):
    other = make_key("team-b", Role.OPERATOR)
    user_api("RunJob", {"namespace": "team-b", "image": "busybox"}, other)
    runner = make_runner("team-a")
    assert runner.acquire() is None
    mine = run(user_api, make_key("team-a", Role.OPERATOR))["job"]
    assert runner.acquire().work_id == mine["jobId"]


def test_logs_by_namespace(make_runner, make_key, user_api, other_namespace):
    job = run(user_api, make_key("team-a", Role.OPERATOR))["job"]
    outsider = make_key("team-b", Role.OPERATOR)
    assert user_api("GetJobLogs", {"jobId": job["jobId"]}, outsider)["code"] == "permission_denied"
    page = user_api("GetJobLogs", {"jobId": job["jobId"]}, make_key("team-a", Role.VIEWER))
    assert page.get("complete", False) is False and page.get("data", "") == ""


def test_revoked_runner_is_refused_and_its_leases_end(make_runner, make_key, user_api):
    operator = make_key("team-a", Role.OPERATOR)
    job = run(user_api, operator)["job"]
    runner = make_runner()
    work = runner.acquire()
    revoke_runner(actor=SYSTEM, runner_id=runner.record.runner_id)
    assert code_of(lambda: runner.heartbeat(work)) == "unauthenticated"
    requeued = user_api("GetJob", {"jobId": job["jobId"]}, operator)["job"]
    assert requeued["state"] == "JOB_STATE_QUEUED" and "runner revoked" in requeued["reason"]


def test_sandbox_agent_key_works_until_deleted(make_runner, make_key, user_api):
    operator = make_key("team-a", Role.OPERATOR)
    sandboxes = "containers.api.v1.SandboxService/"
    workspace = user_api(
        "CreateWorkspace",
        {"namespace": "team-a", "name": "ws"},
        operator,
        service="containers.api.v1.WorkspaceService/",
    )["workspace"]
    body = {"namespace": "team-a", "image": "busybox", "workspaceId": workspace["workspaceId"]}
    sandbox = user_api("CreateSandbox", body, operator, service=sandboxes)["sandbox"]
    assert sandbox["state"] == "SANDBOX_STATE_PENDING"
    runner = make_runner()
    work = runner.acquire(pb.WORK_KIND_SANDBOX)
    assert work.agent_key.startswith("cpk_") and work.workspace_id == workspace["workspaceId"]
    runner.heartbeat(work, running=True)
    got = user_api("GetSandbox", {"sandboxId": sandbox["sandboxId"]}, operator, service=sandboxes)["sandbox"]
    assert got["state"] == "SANDBOX_STATE_RUNNING"
    ws = "containers.api.v1.WorkspaceService/"
    assert "workspace" in user_api(
        "GetWorkspace", {"workspaceId": workspace["workspaceId"]}, work.agent_key, service=ws
    )
    user_api("DeleteSandbox", {"sandboxId": sandbox["sandboxId"]}, operator, service=sandboxes)
    refused = user_api("GetWorkspace", {"workspaceId": workspace["workspaceId"]}, work.agent_key, service=ws)
    assert refused["code"] == "unauthenticated"
    assert runner.heartbeat(work).cancel_requested
    runner.finish(work, pb.RESULT_STOPPED)
    assert not Sandbox.objects.filter(sandbox_id=sandbox["sandboxId"]).exists()
    assert ApiKey.objects.get(sandbox_id=sandbox["sandboxId"]).revoked_at is not None


def test_build_ends_ready_with_its_digest(make_runner, make_key, user_api):
    operator = make_key("team-a", Role.OPERATOR)
    envs = "containers.api.v1.EnvironmentService/"
    body = {"namespace": "team-a", "name": "py", "image": "python:3.12"}
    environment = user_api("RegisterEnvironment", body, operator, service=envs)["environment"]
    user_api("BuildEnvironment", {"environmentId": environment["environmentId"]}, operator, service=envs)
    runner = make_runner()
    work = runner.acquire(pb.WORK_KIND_BUILD)
    assert (work.kind, work.image, work.pull_policy) == (pb.WORK_KIND_BUILD, "python:3.12", "missing")
    assert code_of(lambda: runner.finish(work, pb.RESULT_BUILT)) == "invalid_argument"  # no digest
    runner.finish(work, pb.RESULT_BUILT, image_digest="sha256:" + "a" * 64)
    ready = user_api("GetEnvironment", {"environmentId": environment["environmentId"]}, operator, service=envs)
    assert ready["environment"]["state"] == "ENVIRONMENT_STATE_READY"
    assert ready["environment"]["imageDigest"] == "sha256:" + "a" * 64


def test_two_runners_racing_200_jobs_lease_each_exactly_once(make_runner, make_key, user_api):
    # PostgreSQL: FOR UPDATE SKIP LOCKED; SQLite: writers take the database lock in turn.
    operator = make_key("team-a", Role.OPERATOR)
    for _ in range(200):
        run(user_api, operator)
    runners = [make_runner(name="a"), make_runner(name="b")]
    got: list[list[str]] = [[], []]

    def drain(i):
        while (work := runners[i].acquire()) is not None:
            got[i].append(work.work_id)
            runners[i].finish(work, pb.RESULT_EXITED)  # before the 2 s lease could expire

    threads = [threading.Thread(target=drain, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    leased = got[0] + got[1]
    assert len(leased) == len(set(leased)) == 200 and all(got)
    assert Job.objects.filter(state=Job.State.SUCCEEDED, attempt=1).count() == 200
