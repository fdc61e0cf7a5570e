"""The podman engine against real podman (its REST API on a private socket), busybox image."""

from __future__ import annotations

import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from cprunner.cli import containers_conf
from cprunner.engines import ContainerSpec, ExitStatus, ImageNotFound, Limits
from cprunner.engines import podman as podman_engine
from cprunner.engines.podman import PodmanEngine
from cprunner.runner import LABEL_RUNNER, LABEL_WORK, Config, Runner

from tests.runner.support import IMAGE


def spec(runner_name: str, command: list[str], **fields) -> ContainerSpec:
    labels = {LABEL_RUNNER: runner_name, LABEL_WORK: fields.pop("work_id", "job_engine")}
    return ContainerSpec(name="", image=IMAGE, command=command, labels=labels, **fields)


def output(engine, container_id: str) -> bytes:
    return b"".join(engine.logs(container_id))


def test_exit_code_and_output(engine, runner_name):
    container = engine.start(spec(runner_name, ["sh", "-c", "echo hi; echo oops >&2; exit 3"]))
    status = engine.wait(container)
    assert (status.exit_code, status.signal) == (3, 0)
    assert output(engine, container) == b"hi\noops\n"
    engine.remove(container)
    assert engine.list({LABEL_RUNNER: runner_name}) == []


def test_env_values_reach_the_container(engine, runner_name):
    env = {"GREETING": "hello world", "QUOTED": 'it\'s "fine" $HOME'}
    container = engine.start(spec(runner_name, ["sh", "-c", 'echo "$GREETING|$QUOTED"'], env=env))
    assert engine.wait(container).exit_code == 0
    assert output(engine, container) == b'hello world|it\'s "fine" $HOME\n'


def test_stop_sends_sigterm_first(engine, runner_name):
    script = "trap 'echo term; exit 0' TERM; echo up; while :; do sleep 0.1; done"
    container = engine.start(spec(runner_name, ["sh", "-c", script]))
    logs = engine.logs(container)
    assert next(logs) == b"up\n"  # the trap is set
    started = time.monotonic()
    engine.stop(container, grace=10)
    assert time.monotonic() - started < 5
    assert engine.wait(container).exit_code == 0
    assert b"".join(logs) == b"term\n"


def test_a_command_without_a_handler_stops_at_sigterm(engine, runner_name):
    # PID 1 ignores SIGTERM unless it handles it: the engine runs an init that forwards it.
    container = engine.start(spec(runner_name, ["sleep", "60"]))
    started = time.monotonic()
    engine.stop(container, grace=10)
    assert time.monotonic() - started < 5
    assert engine.wait(container) == ExitStatus(exit_code=143, signal=15)


def test_stop_kills_after_the_grace_period_and_remove_leaves_nothing(engine, runner_name):
    script = "trap '' TERM; echo up; while :; do sleep 0.1; done"
    container = engine.start(spec(runner_name, ["sh", "-c", script]))
    assert next(engine.logs(container)) == b"up\n"
    started = time.monotonic()
    engine.stop(container, grace=1)
    assert 0.9 < time.monotonic() - started < 6
    status = engine.wait(container)
    assert (status.exit_code, status.signal) == (137, 9)
    engine.remove(container)
    engine.remove(container)  # idempotent
    assert engine.list({LABEL_RUNNER: runner_name}) == []


def test_labels_and_limits_are_applied(engine, runner_name):
    limits = Limits(memory_bytes=64 * 1024 * 1024, milli_cpus=500, max_pids=50)
    container = engine.start(spec(runner_name, ["sleep", "30"], limits=limits, work_id="job_labels"))
    attrs = engine.client.containers.get(container).attrs
    host = attrs["HostConfig"]
    assert (host["Memory"], host["CpuQuota"], host["CpuPeriod"], host["PidsLimit"]) == (64 << 20, 50_000, 100_000, 50)
    assert attrs["Config"]["Labels"] == {LABEL_RUNNER: runner_name, LABEL_WORK: "job_labels"}
    [listed] = engine.list({LABEL_RUNNER: runner_name, LABEL_WORK: "job_labels"})
    assert listed.id == container
    assert engine.list({LABEL_RUNNER: runner_name, LABEL_WORK: "job_other"}) == []
    engine.remove(container)


def test_a_starting_runner_removes_its_orphans_only(engine, runner_name):
    mine = [engine.start(spec(runner_name, ["sleep", "30"], work_id=f"job_{n}")) for n in range(2)]
    other = engine.start(spec(f"{runner_name}-other", ["sleep", "30"]))
    try:
        Runner(Config(url="http://127.0.0.1:9", key="unused", engine=engine, name=runner_name)).sweep()
        assert engine.list({LABEL_RUNNER: runner_name}) == []
        assert [c.id for c in engine.list({LABEL_RUNNER: f"{runner_name}-other"})] == [other]
    finally:
        for container in [*mine, other]:
            engine.remove(container)


def test_image_digest(engine):
    image = engine.image(IMAGE)
    digest = subprocess.run(
        ["podman", "image", "inspect", "--format", "{{.Digest}}", IMAGE],
        capture_output=True,
        text=True,
        check=True,
        env={"CONTAINERS_CONF": containers_conf(), "PATH": "/usr/bin:/bin:/usr/sbin:/sbin"},
    ).stdout.strip()
    assert image.digest == digest
    assert digest.startswith("sha256:")


def test_a_missing_image_is_a_clear_error(engine, runner_name):
    with pytest.raises(ImageNotFound, match="image localhost/cp-missing:latest is not present"):
        engine.start(ContainerSpec(name="", image="localhost/cp-missing:latest", command=["true"]))
    with pytest.raises(ImageNotFound, match=r"image localhost/cp-missing:latest could not be pulled: .+"):
        engine.pull("localhost/cp-missing:latest")


def test_waiting_and_following_outlast_the_clients_read_timeout(podman_socket, runner_name, monkeypatch):
    # Both may take as long as the work runs: a job silent for longer than the API client's
    # timeout keeps its exit status and its output (past the quick-polling phase, too).
    monkeypatch.setattr(podman_engine, "QUICK_WAIT_SECONDS", 1.0)
    engine = PodmanEngine(podman_socket, timeout=2)
    waited = engine.start(spec(runner_name, ["sh", "-c", "sleep 3; exit 4"], work_id="job_waited"))
    followed = engine.start(spec(runner_name, ["sh", "-c", "sleep 3; echo late"], work_id="job_followed"))
    with ThreadPoolExecutor(1) as reader:
        read = reader.submit(output, engine, followed)  # following from the start, through the silence
        assert engine.wait(waited).exit_code == 4
        assert read.result(timeout=30) == b"late\n"
