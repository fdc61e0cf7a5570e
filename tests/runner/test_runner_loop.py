"""cprunner (a real process, podman engine) against a test double of the control plane.

One runner with two slots serves the module's fake control plane; the tests that kill or stop
a runner start their own.
"""

from __future__ import annotations

import signal
import time
import uuid
from pathlib import Path

import pytest
from cprunner.runner import LABEL_RUNNER, LABEL_WORK
from cpsdk._gen.containers.runtime.v1 import runner_pb2 as pb

from tests.runner.fake_control_plane import KEY, FakeControlPlane
from tests.runner.support import PodmanService, RunnerProcess


@pytest.fixture(scope="module")
def shared_runner(control_plane, podman_socket, engine, tmp_path_factory):
    name = f"test-shared-{uuid.uuid4().hex[:10]}"  # unique: a starting runner removes its name's containers
    for container in engine.list({LABEL_RUNNER: name}):
        engine.remove(container.id)
    log_path = tmp_path_factory.mktemp("runner") / "runner.log"
    runner = RunnerProcess(
        control_plane.url, KEY, name, "--engine", "podman", "--podman-socket", podman_socket, "--concurrency", "2",
        "--shutdown-grace", "1", log_path=log_path,
    ).start()  # fmt: skip
    yield runner
    runner.stop()
    for container in engine.list({LABEL_RUNNER: name}):
        engine.remove(container.id)


def containers_of(engine, work_id: str) -> list:
    return engine.list({LABEL_WORK: work_id})


def wait_gone(engine, work_id: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while containers_of(engine, work_id):
        assert time.monotonic() < deadline, f"the container of {work_id} is still there"
        time.sleep(0.1)


def test_a_job_runs_and_reports_its_exit_code_env_and_output(control_plane, shared_runner, engine):
    work_id = control_plane.add(command=["sh", "-c", 'echo "hi $WHO"; exit 3'], env={"WHO": "there"})
    finished = control_plane.wait_finished(work_id)
    assert (finished.result, finished.exit_code, finished.signal) == (pb.RESULT_EXITED, 3, 0)
    lease = control_plane.lease(work_id)
    assert bytes(lease.logs) == b"hi there\n"
    assert containers_of(engine, work_id) == []  # removed before FinishWork


def test_logs_are_stored_once_in_order_from_the_log_offset(control_plane, shared_runner):
    # A later attempt: its output continues at log_offset; the fake answers the first chunk
    # "unavailable" after storing it, so the runner sends that chunk again.
    control_plane.fail_appends = 1
    size = 2_500_000  # three AppendLogs calls at least (1 MiB each at most)
    command = ["sh", "-c", f"echo first; head -c {size} /dev/zero | tr '\\0' x"]
    work_id = control_plane.add(command=command, prior_logs=b"before")
    finished = control_plane.wait_finished(work_id)
    assert finished.exit_code == 0
    lease = control_plane.lease(work_id)
    assert bytes(lease.logs) == b"before" + b"first\n" + b"x" * size
    offsets = [offset for offset, _ in lease.appends]
    assert offsets[0] == 6 and offsets[1] == 6  # the retried chunk, at the same offset
    assert offsets == sorted(offsets) and max(length for _, length in lease.appends) <= 1 << 20


def test_cancel_stops_the_container_and_reports_cancelled(control_plane, shared_runner, engine):
    work_id = control_plane.add(command=["sleep", "60"])
    control_plane.wait_running(work_id)
    assert len(containers_of(engine, work_id)) == 1
    started = time.monotonic()
    control_plane.cancel(work_id, grace=1)
    finished = control_plane.wait_finished(work_id)
    assert (finished.result, finished.exit_code, finished.signal) == (pb.RESULT_CANCELLED, 143, 15)  # SIGTERM
    assert time.monotonic() - started < 4
    assert containers_of(engine, work_id) == []


def test_timeout_stops_the_job(control_plane, shared_runner, engine):
    work_id = control_plane.add(command=["sleep", "60"], timeout_seconds=1)
    started = time.monotonic()
    finished = control_plane.wait_finished(work_id)
    assert finished.result == pb.RESULT_TIMED_OUT
    assert "timed out after 1 s" in finished.reason
    assert time.monotonic() - started < 8
    assert containers_of(engine, work_id) == []


def test_a_lost_lease_kills_the_container_at_once(control_plane, shared_runner, engine):
    work_id = control_plane.add(command=["sleep", "60"])
    control_plane.wait_running(work_id)
    control_plane.revoke(work_id)  # the next heartbeat answers failed_precondition
    wait_gone(engine, work_id, timeout=5)
    assert control_plane.lease(work_id).finished is None
    assert f"work {work_id}: lease lost" in shared_runner.log()


def test_a_sandbox_gets_its_key_and_url_runs_until_deleted(control_plane, shared_runner, engine):
    work_id = control_plane.add(
        pb.WORK_KIND_SANDBOX, ["sleep", "60"], agent_key="cpk_agent-secret", workspace_id="ws_123"
    )
    control_plane.wait_running(work_id)  # a heartbeat said running=true
    [container] = containers_of(engine, work_id)
    env = engine.client.containers.get(container.id).attrs["Config"]["Env"]
    assert {"CP_AGENT_KEY=cpk_agent-secret", f"CP_URL={control_plane.url}", "CP_WORKSPACE_ID=ws_123"} <= set(env)
    control_plane.cancel(work_id, grace=1)
    finished = control_plane.wait_finished(work_id)
    assert finished.result == pb.RESULT_STOPPED
    assert containers_of(engine, work_id) == []
    assert "cpk_agent-secret" not in shared_runner.log()


def test_a_sandbox_that_exits_is_stopped_with_its_exit_code(control_plane, shared_runner):
    work_id = control_plane.add(pb.WORK_KIND_SANDBOX, ["sh", "-c", "exit 4"], agent_key="cpk_agent-2")
    finished = control_plane.wait_finished(work_id)
    assert (finished.result, finished.exit_code) == (pb.RESULT_STOPPED, 4)


def test_builds_resolve_the_image_per_pull_policy(control_plane, shared_runner, engine):
    digest = engine.image("localhost/cp-busybox:latest").digest
    built = control_plane.add(pb.WORK_KIND_BUILD, pull_policy="never")
    missing = control_plane.add(pb.WORK_KIND_BUILD, image="localhost/cp-missing:latest", pull_policy="never")
    unpullable = control_plane.add(pb.WORK_KIND_BUILD, image="localhost/cp-missing:latest", pull_policy="missing")
    finished = control_plane.wait_finished(built)
    assert (finished.result, finished.image_digest) == (pb.RESULT_BUILT, digest)
    finished = control_plane.wait_finished(missing)
    assert finished.result == pb.RESULT_ERROR
    assert finished.reason == "image localhost/cp-missing:latest is not present on this runner"
    finished = control_plane.wait_finished(unpullable)
    assert finished.result == pb.RESULT_ERROR
    assert finished.reason.startswith("image localhost/cp-missing:latest could not be pulled: ")


def test_a_missing_image_fails_the_job_with_a_reason(control_plane, shared_runner):
    never = control_plane.add(command=["true"], image="localhost/cp-missing:latest", pull_policy="never")
    missing = control_plane.add(command=["true"], image="localhost/cp-missing:latest")  # pulled when absent
    finished = control_plane.wait_finished(never)
    assert finished.result == pb.RESULT_ERROR
    assert finished.reason == "image localhost/cp-missing:latest is not present on this runner"
    finished = control_plane.wait_finished(missing)
    assert finished.result == pb.RESULT_ERROR
    assert finished.reason.startswith("image localhost/cp-missing:latest could not be pulled: ")


def test_the_control_plane_down_mid_job_loses_nothing(control_plane, shared_runner):
    work_id = control_plane.add(command=["sh", "-c", "echo before; sleep 3; echo after"])
    control_plane.wait_for(lambda: work_id in control_plane.leases and control_plane.leases[work_id].logs)
    control_plane.stop()  # connections refused: heartbeats, the second chunk and FinishWork retry
    time.sleep(4)
    control_plane.start()
    finished = control_plane.wait_finished(work_id)
    assert (finished.result, finished.exit_code) == (pb.RESULT_EXITED, 0)
    assert bytes(control_plane.lease(work_id).logs) == b"before\nafter\n"
    assert "retrying" in shared_runner.log()


# -- runners of their own ---------------------------------------------------------------------


@pytest.fixture
def fresh_control_plane():
    fake = FakeControlPlane()
    fake.start()
    yield fake
    fake.stop()


def test_a_runner_killed_and_restarted_leaves_no_orphan(
    fresh_control_plane, start_runner, runner_name, podman_socket, engine
):
    args = ("--engine", "podman", "--podman-socket", podman_socket)
    runner = start_runner(fresh_control_plane.url, runner_name, *args)
    work_id = fresh_control_plane.add(command=["sleep", "60"])
    fresh_control_plane.wait_running(work_id)
    runner.signal(signal.SIGKILL)
    runner.wait()
    assert len(containers_of(engine, work_id)) == 1  # the orphan
    start_runner(fresh_control_plane.url, runner_name, *args)
    wait_gone(engine, work_id)


def test_sigterm_hands_running_work_back_and_exits_cleanly(
    fresh_control_plane, start_runner, runner_name, podman_socket, engine
):
    runner = start_runner(
        fresh_control_plane.url, runner_name, "--engine", "podman", "--podman-socket", podman_socket,
        "--shutdown-grace", "1",
    )  # fmt: skip
    work_id = fresh_control_plane.add(command=["sleep", "60"])
    fresh_control_plane.wait_running(work_id)
    runner.signal(signal.SIGTERM)
    assert runner.wait(timeout=15) == 0
    finished = fresh_control_plane.lease(work_id).finished
    assert finished.result == pb.RESULT_RELEASED
    assert containers_of(engine, work_id) == []
    # It took no more work once told to stop.
    later = fresh_control_plane.add(command=["true"])
    time.sleep(0.5)
    assert later not in fresh_control_plane.leases


def test_sigterm_lets_short_work_finish(fresh_control_plane, start_runner, runner_name, podman_socket):
    runner = start_runner(
        fresh_control_plane.url, runner_name, "--engine", "podman", "--podman-socket", podman_socket,
        "--shutdown-grace", "20",
    )  # fmt: skip
    work_id = fresh_control_plane.add(command=["sh", "-c", "sleep 1; echo done"])
    fresh_control_plane.wait_running(work_id)
    runner.signal(signal.SIGTERM)
    assert runner.wait(timeout=15) == 0
    finished = fresh_control_plane.lease(work_id).finished
    assert (finished.result, finished.exit_code) == (pb.RESULT_EXITED, 0)
    assert bytes(fresh_control_plane.lease(work_id).logs) == b"done\n"


def test_the_process_engine_runs_jobs_when_allowed(fresh_control_plane, start_runner, runner_name, tmp_path):
    start_runner(
        fresh_control_plane.url, runner_name, "--engine", "process", "--i-understand-process-engine-is-unsafe",
        "--state-dir", str(tmp_path / "state"),
    )  # fmt: skip
    work_id = fresh_control_plane.add(command=["sh", "-c", 'echo "hi $WHO"; exit 3'], env={"WHO": "you"})
    finished = fresh_control_plane.wait_finished(work_id)
    assert (finished.result, finished.exit_code) == (pb.RESULT_EXITED, 3)
    assert bytes(fresh_control_plane.lease(work_id).logs) == b"hi you\n"
    cancelled = fresh_control_plane.add(command=["sleep", "60"])
    fresh_control_plane.wait_running(cancelled)
    fresh_control_plane.cancel(cancelled, grace=1)
    finished = fresh_control_plane.wait_finished(cancelled)
    assert (finished.result, finished.signal) == (pb.RESULT_CANCELLED, 15)
    assert list((tmp_path / "state").iterdir()) == []  # nothing left behind


def test_a_refused_key_stops_the_runner(fresh_control_plane, start_runner, runner_name, podman_socket):
    args = ("--engine", "podman", "--podman-socket", podman_socket)
    runner = start_runner(fresh_control_plane.url, runner_name, *args, key="cpk_revoked-key")
    assert runner.wait(timeout=15) == 1
    assert "the control plane refused this runner's key (unauthenticated: a runner key is required)" in runner.log()
    assert "cpk_revoked-key" not in runner.log()


def test_work_is_handed_back_while_the_engine_does_not_answer(fresh_control_plane, start_runner, runner_name, tmp_path):
    podman = PodmanService(tmp_path).__enter__()
    try:
        start_runner(fresh_control_plane.url, runner_name, "--engine", "podman", "--podman-socket", podman.socket)
        first = fresh_control_plane.add(command=["true"])
        assert fresh_control_plane.wait_finished(first).result == pb.RESULT_EXITED
        podman.__exit__()  # podman's API goes away
        second = fresh_control_plane.add(command=["true"])
        finished = fresh_control_plane.wait_finished(second)
        assert finished.result == pb.RESULT_RELEASED
        assert f"podman's API at unix://{podman.socket} does not answer" in finished.reason
        third = fresh_control_plane.add(command=["true"])
        time.sleep(1.5)
        assert third not in fresh_control_plane.leases  # no work taken while the engine is down
        podman = PodmanService(tmp_path).__enter__()
        finished = fresh_control_plane.wait_finished(third)
        assert (finished.result, finished.exit_code) == (pb.RESULT_EXITED, 0)
    finally:
        podman.__exit__()


def rss_bytes(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) * 1024


def test_output_waits_in_the_engine_while_the_control_plane_is_down(
    fresh_control_plane, start_runner, runner_name, podman_socket
):
    runner = start_runner(fresh_control_plane.url, runner_name, "--engine", "podman", "--podman-socket", podman_socket)
    size = 40_000_000
    work_id = fresh_control_plane.add(command=["sh", "-c", f"echo go; sleep 1; head -c {size} /dev/zero | tr '\\0' x"])
    fresh_control_plane.wait_for(
        lambda: work_id in fresh_control_plane.leases and fresh_control_plane.leases[work_id].logs
    )
    before = rss_bytes(runner.process.pid)
    fresh_control_plane.stop()
    time.sleep(5)  # the job writes its 40 MB meanwhile; the runner holds at most 8 MiB of it
    grown = rss_bytes(runner.process.pid) - before
    fresh_control_plane.start()
    finished = fresh_control_plane.wait_finished(work_id, timeout=60)
    assert (finished.result, finished.exit_code) == (pb.RESULT_EXITED, 0)
    logs = bytes(fresh_control_plane.lease(work_id).logs)
    assert logs == b"go\n" + b"x" * size
    assert grown < 24 << 20, grown
