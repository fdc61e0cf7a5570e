"""Fixtures for the runner: the test image, podman's API on a private socket, runner processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from cprunner.cli import containers_conf
from cprunner.engines.podman import PodmanEngine
from cprunner.runner import LABEL_RUNNER

from tests.live import ROOT, stop_process
from tests.runner.fake_control_plane import KEY, FakeControlPlane


@pytest.fixture(scope="session")
def podman_socket(tmp_path_factory):
    """`cprunner podman-service` on a socket of this test run, after scripts/test-image."""
    env = {**os.environ, "CONTAINERS_CONF": containers_conf()}
    subprocess.run([ROOT / "scripts" / "test-image"], check=True, env=env, timeout=300)
    path = tmp_path_factory.mktemp("podman") / "podman.sock"
    log = (path.parent / "service.log").open("wb")
    service = subprocess.Popen(
        [sys.executable, "-m", "cprunner", "podman-service", "--socket", str(path)], stdout=log, stderr=log
    )
    engine = PodmanEngine(str(path))
    deadline = time.monotonic() + 30
    while True:
        try:
            engine.version()
            break
        except Exception:
            if time.monotonic() > deadline or service.poll() is not None:
                stop_process(service)
                raise AssertionError(
                    f"podman's API did not come up: {(path.parent / 'service.log').read_text()}"
                ) from None
            time.sleep(0.1)
    yield str(path)
    stop_process(service)
    log.close()


@pytest.fixture(scope="session")
def engine(podman_socket):
    return PodmanEngine(podman_socket)


@pytest.fixture
def runner_name(engine):
    """A runner name of this test only; its containers are removed afterwards, whatever happened."""
    name = f"test-{uuid.uuid4().hex[:10]}"
    yield name
    for container in engine.list({LABEL_RUNNER: name}):
        engine.remove(container.id)


@pytest.fixture(scope="module")
def control_plane():
    fake = FakeControlPlane()
    fake.start()
    yield fake
    fake.stop()


class RunnerProcess:
    """`python -m cprunner …` with CP_URL and CP_RUNNER_KEY in its environment, as operators start it."""

    def __init__(self, url: str, name: str, *args: str, log_path: Path, key: str = KEY):
        self.args = [
            sys.executable,
            "-m",
            "cprunner",
            "--name",
            name,
            "--poll-seconds",
            "1",
            "--stop-grace",
            "1",
            "--log-level",
            "DEBUG",
            *args,
        ]
        self.env = {**os.environ, "CP_URL": url, "CP_RUNNER_KEY": key}
        self.log_path = log_path
        self.process: subprocess.Popen | None = None

    def start(self) -> RunnerProcess:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(self.args, env=self.env, stdout=log, stderr=log)
        return self

    def log(self) -> str:
        return self.log_path.read_text()

    def signal(self, signum: int) -> None:
        self.process.send_signal(signum)

    def wait(self, timeout: float = 30) -> int:
        return self.process.wait(timeout)

    def stop(self) -> None:
        stop_process(self.process)


@pytest.fixture
def start_runner(tmp_path, runner_name):
    """start_runner(url, name, *args) → a started RunnerProcess, killed after the test (before
    runner_name's clean-up removes what it left)."""
    started: list[RunnerProcess] = []

    def start(url: str, name: str, *args: str, key: str = KEY) -> RunnerProcess:
        runner = RunnerProcess(url, name, *args, key=key, log_path=tmp_path / f"runner-{len(started)}.log").start()
        started.append(runner)
        return runner

    yield start
    for runner in started:
        if runner.process.poll() is None:
            runner.signal(signal.SIGKILL)
            runner.wait()
