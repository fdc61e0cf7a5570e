"""End to end: a real gunicorn, a real `cprunner --engine podman` on a private podman socket, the
test image. Nothing here is a double: jobs and sandboxes go from RunJob/CreateSandbox through
AcquireWork to a container and back, and what a user sees is asserted through the public API.

PostgreSQL where DATABASE_URL points at it (CI), SQLite otherwise.
"""

from __future__ import annotations

import json
import signal
import time
import urllib.error
import urllib.request
from collections import Counter

import pytest
from cprunner.runner import LABEL_ATTEMPT, LABEL_RUNNER, LABEL_WORK
from django.db import connection

from audit.models import AuditEvent
from controlplane.auth import Principal, Role
from runners.services import issue_runner
from tests.runner.support import IMAGE
from tests.support import live
from workloads.models import Job

SYSTEM = Principal.system("tests")
# Heartbeats every second; a lease not renewed for 8 s is lost (long enough for a control plane
# restart, short enough for a test); SIGTERM → SIGKILL after 1 s.
SERVER_SETTINGS = {
    "RUNNER_HEARTBEAT_SECONDS": "1",
    "RUNNER_LEASE_TTL_SECONDS": "8",
    "RUNNER_STOP_GRACE_SECONDS": "1",
    "RUNNER_POLL_SECONDS": "1",
    "JOBS_MAX_ATTEMPTS": "3",
    "CONTAINERS_SANDBOXES_ENABLED": "true",
}
DONE = {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"}
JOBS = "containers.api.v1.JobService/"
SANDBOXES = "containers.api.v1.SandboxService/"
WORKSPACES = "containers.api.v1.WorkspaceService/"


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker):
    env = dict(SERVER_SETTINGS)
    if connection.vendor == "postgresql":
        env["DATABASE_URL"] = live.test_database_url()
    service = live.ServiceProcess(env=env, workers=2).start()
    yield service
    service.stop()


class Api:
    """The user API over HTTP, as JSON (Connect's unary protocol), with one key."""

    def __init__(self, url: str, key: str):
        self.url, self.key = url, key

    def __call__(self, method: str, body: dict, service: str = JOBS, key: str | None = None) -> dict:
        request = urllib.request.Request(
            f"{self.url}/{service}{method}",
            data=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {key or self.key}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            return json.loads(error.read())

    def run(self, *command: str, **fields) -> str:
        body = {"namespace": "team-a", "image": IMAGE, "command": list(command), **fields}
        return self("RunJob", body)["job"]["jobId"]

    def job(self, job_id: str) -> dict:
        return self("GetJob", {"jobId": job_id})["job"]

    def logs(self, job_id: str) -> str:
        return self("GetJobLogs", {"jobId": job_id}).get("data", "")  # JSON omits an empty field

    def wait(self, job_id: str, states=DONE, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        while (job := self.job(job_id))["state"] not in states:
            assert time.monotonic() < deadline, f"job still {job['state']} after {timeout} s: {job}"
            time.sleep(0.2)
        return job


@pytest.fixture
def api(server, transactional_db, namespace, make_key) -> Api:
    return Api(server.url, make_key("team-a", Role.OPERATOR))


@pytest.fixture
def runner_key(transactional_db) -> str:
    return issue_runner(actor=SYSTEM, name="e2e", namespaces=())[1]


@pytest.fixture
def podman_runner(server, runner_key, podman_socket, start_runner, runner_name):
    """podman_runner(*args, name=runner_name) → a started cprunner on this test's podman socket, with
    the host's network (containers reach the API on loopback)."""

    def start(*args: str, name: str = runner_name, key: str = runner_key):
        engine_args = ("--engine", "podman", "--podman-socket", podman_socket, "--network", "host")
        return start_runner(server.url, name, *engine_args, *args, key=key)

    return start


def containers(engine, name: str, **labels: str) -> list:
    return engine.list({LABEL_RUNNER: name, **labels})


def exec_in(engine, container_id: str, *command: str) -> str:
    """`podman exec` through the API: the command's stdout; it must exit 0."""
    status, (stdout, stderr) = engine.client.containers.get(container_id).exec_run(list(command), demux=True)
    assert status == 0, stderr
    return (stdout or b"").decode()


def wait_until(condition, timeout: float = 30, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"{what}: not within {timeout} s"
        time.sleep(0.2)
    return value


def test_exit_codes_logs_and_env_reach_the_container(api, podman_runner, engine, runner_name):
    failing = api.run("sh", "-c", 'echo "hello $GREETING"; echo to-stderr >&2; exit 3', env={"GREETING": "world"})
    passing = api.run("true")
    podman_runner("--concurrency", "2")
    failed = api.wait(failing)
    assert (failed["state"], failed["exitCode"], failed["reason"]) == ("JOB_STATE_FAILED", 3, "exited with code 3")
    assert failed["attempt"] == 1 and "startTime" in failed and "endTime" in failed
    logs = api("GetJobLogs", {"jobId": failing})
    assert logs["complete"] is True
    assert sorted(logs["data"].splitlines()) == ["hello world", "to-stderr"]  # stdout and stderr merged
    succeeded = api.wait(passing)
    assert (succeeded["state"], succeeded["exitCode"]) == ("JOB_STATE_SUCCEEDED", 0)
    assert containers(engine, runner_name) == []  # removed before FinishWork


def test_cancel_of_a_running_sleep_stops_and_removes_its_container(api, podman_runner, engine, runner_name):
    job_id = api.run("sleep", "300")
    podman_runner()
    api.wait(job_id, {"JOB_STATE_RUNNING"})
    wait_until(lambda: containers(engine, runner_name, **{LABEL_WORK: job_id}), what="the job's container")
    asked = time.monotonic()
    assert api("CancelJob", {"jobId": job_id})["job"]["state"] == "JOB_STATE_RUNNING"  # its runner stops it
    cancelled = api.wait(job_id, timeout=20)
    assert cancelled["state"] == "JOB_STATE_CANCELLED" and cancelled["reason"].startswith("cancelled by api_key:")
    assert time.monotonic() - asked < 15  # heartbeat 1 s, grace 1 s: seconds, not the sleep's 300
    assert containers(engine, runner_name) == []


def test_timeout_seconds_holds(api, podman_runner, engine, runner_name):
    job_id = api.run("sleep", "300", timeoutSeconds=2)
    podman_runner()
    job = api.wait(job_id, timeout=30)
    assert job["state"] == "JOB_STATE_FAILED" and job["reason"].startswith("timed out after 2 s"), job
    assert containers(engine, runner_name) == []


def test_runner_killed_mid_job_the_job_runs_again_and_no_orphan_is_left(api, podman_runner, engine, runner_name):
    job_id = api.run("sh", "-c", "echo started; sleep 3; echo finished")
    killed = podman_runner()
    api.wait(job_id, {"JOB_STATE_RUNNING"})
    first = wait_until(lambda: containers(engine, runner_name, **{LABEL_WORK: job_id}), what="attempt 1's container")
    killed.signal(signal.SIGKILL)
    killed.wait()
    # The same runner (same name) comes back: it removes the container of work it no longer
    # holds, and, once the lease has expired (8 s), takes the job again.
    podman_runner()
    wait_until(
        lambda: not containers(engine, runner_name, **{LABEL_WORK: job_id, LABEL_ATTEMPT: "1"}),
        timeout=15,
        what="attempt 1's orphan removed",
    )
    job = api.wait(job_id, timeout=60)
    assert (job["state"], job["attempt"], job["exitCode"]) == ("JOB_STATE_SUCCEEDED", 2, 0)
    assert api.logs(job_id).count("finished") == 1  # attempt 1 never got that far
    assert first[0].id not in {c.id for c in engine.list({LABEL_WORK: job_id})}
    assert containers(engine, runner_name) == []
    leases = AuditEvent.objects.filter(action="job.lease", target=f"job:{job_id}")
    assert sorted(event.changes["attempt"] for event in leases) == [1, 2]
    assert AuditEvent.objects.filter(action="job.lease_lost", target=f"job:{job_id}").count() == 1


def test_control_plane_restarted_mid_job_loses_nothing(api, server, podman_runner, engine, runner_name):
    job_id = api.run("sh", "-c", "for i in 1 2 3 4 5 6 7 8; do echo line $i; sleep 0.5; done")
    podman_runner()
    api.wait(job_id, {"JOB_STATE_RUNNING"})
    wait_until(lambda: "line" in api.logs(job_id), what="the first lines stored")
    server.stop()  # SIGTERM, then started again on the same port: the runner's calls retry meanwhile
    time.sleep(1)
    server.start()
    job = api.wait(job_id, timeout=60)
    assert (job["state"], job["attempt"]) == ("JOB_STATE_SUCCEEDED", 1)  # the lease survived
    assert api.logs(job_id) == "".join(f"line {i}\n" for i in range(1, 9))  # each line once, none lost
    assert containers(engine, runner_name) == []


def test_two_runners_racing_jobs_run_each_exactly_once(api, podman_runner, engine, runner_name):
    # 60 jobs here (the issue's 200 are raced at the API level in tests/runners), so that this
    # stays well under a minute on a loaded 2-core machine.
    job_ids = [api.run("true") for _ in range(60)]
    podman_runner("--concurrency", "4")
    other_key = issue_runner(actor=SYSTEM, name="e2e-b", namespaces=())[1]  # another runner, not a second process
    podman_runner("--concurrency", "4", name=f"{runner_name}-b", key=other_key)
    try:
        for job_id in job_ids:
            job = api.wait(job_id, timeout=120)
            assert (job["state"], job["attempt"]) == ("JOB_STATE_SUCCEEDED", 1), job
        leases = AuditEvent.objects.filter(action="job.lease", target__in=[f"job:{j}" for j in job_ids])
        assert Counter(event.target for event in leases) == {f"job:{j}": 1 for j in job_ids}
        assert len({event.changes["runner_id"] for event in leases}) == 2  # both took work
        assert Job.objects.filter(job_id__in=job_ids, attempt=1, state=Job.State.SUCCEEDED).count() == 60
    finally:
        for container in containers(engine, f"{runner_name}-b"):
            engine.remove(container.id)


def test_a_stale_lease_kills_the_container(api, podman_runner, engine, runner_name):
    """A runner frozen past its lease: the job goes to attempt 2; woken, the runner's heartbeat is
    refused (failed_precondition) and it kills its attempt-1 container."""
    job_id = api.run("sleep", "300")
    frozen = podman_runner()
    api.wait(job_id, {"JOB_STATE_RUNNING"})
    wait_until(lambda: containers(engine, runner_name, **{LABEL_WORK: job_id}), what="attempt 1's container")
    frozen.signal(signal.SIGSTOP)
    other = podman_runner(name=f"{runner_name}-b")  # reaps the expired lease and takes attempt 2
    try:
        second = wait_until(
            lambda: containers(engine, f"{runner_name}-b", **{LABEL_WORK: job_id}), timeout=40, what="attempt 2"
        )
        assert second[0].labels[LABEL_ATTEMPT] == "2"
        frozen.signal(signal.SIGCONT)
        wait_until(lambda: not containers(engine, runner_name), timeout=15, what="attempt 1's container killed")
        assert "lease" in frozen.log().lower()
        job = api.job(job_id)
        assert (job["state"], job["attempt"]) == ("JOB_STATE_RUNNING", 2)  # attempt 2 is untouched
        api("CancelJob", {"jobId": job_id})
        assert api.wait(job_id, timeout=20)["state"] == "JOB_STATE_CANCELLED"
    finally:
        frozen.signal(signal.SIGCONT)
        other.stop()
        for container in containers(engine, f"{runner_name}-b"):
            engine.remove(container.id)


def test_sandbox_runs_its_agent_key_works_inside_until_deleted(api, podman_runner, engine, runner_name):
    workspace = api("CreateWorkspace", {"namespace": "team-a", "name": "ws"}, WORKSPACES)["workspace"]
    body = {"namespace": "team-a", "image": IMAGE, "workspaceId": workspace["workspaceId"]}
    sandbox_id = api("CreateSandbox", body, SANDBOXES)["sandbox"]["sandboxId"]
    podman_runner("--kinds", "sandbox")
    wait_until(
        lambda: api("GetSandbox", {"sandboxId": sandbox_id}, SANDBOXES)["sandbox"]["state"] == "SANDBOX_STATE_RUNNING",
        what="the sandbox RUNNING",
    )
    (container,) = containers(engine, runner_name, **{LABEL_WORK: sandbox_id})
    # From inside: busybox wget with the agent key and CP_URL the runner gave the container.
    call = (
        "wget -qO- --header \"Authorization: Bearer $CP_AGENT_KEY\" --header 'Content-Type: application/json' "
        f'--post-data \'{{"workspaceId": "{workspace["workspaceId"]}"}}\' '
        "$CP_URL/containers.api.v1.WorkspaceService/GetWorkspace"
    )
    output = exec_in(engine, container.id, "sh", "-c", call)
    assert json.loads(output)["workspace"]["workspaceId"] == workspace["workspaceId"]
    agent_key = exec_in(engine, container.id, "sh", "-c", "echo $CP_AGENT_KEY").strip()
    assert agent_key.startswith("cpk_")
    api("DeleteSandbox", {"sandboxId": sandbox_id}, SANDBOXES)
    refused = api("GetWorkspace", {"workspaceId": workspace["workspaceId"]}, WORKSPACES, key=agent_key)
    assert refused["code"] == "unauthenticated"
    wait_until(lambda: not containers(engine, runner_name), timeout=20, what="the sandbox's container gone")
    wait_until(
        lambda: api("GetSandbox", {"sandboxId": sandbox_id}, SANDBOXES).get("code") == "not_found",
        timeout=20,
        what="the sandbox removed",
    )
