"""Fixtures for the runner: the test image, podman's API on a private socket, runner processes."""

from __future__ import annotations

import signal
import uuid

import pytest
from cprunner.engines.podman import PodmanEngine
from cprunner.runner import LABEL_RUNNER

from tests.runner.fake_control_plane import KEY, FakeControlPlane
from tests.runner.support import PodmanService, RunnerProcess


@pytest.fixture(scope="session")
def podman_socket(tmp_path_factory):
    """podman's API on a socket of this test run, with the shipped containers.conf."""
    with PodmanService(tmp_path_factory.mktemp("podman")) as service:
        yield service.socket


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


@pytest.fixture
def start_runner(tmp_path, runner_name):
    """start_runner(url, name, *args) → a started RunnerProcess, killed after the test (before
    runner_name's clean-up removes what it left)."""
    started: list[RunnerProcess] = []

    def start(url: str, name: str, *args: str, key: str = KEY) -> RunnerProcess:
        runner = RunnerProcess(url, key, name, *args, log_path=tmp_path / f"runner-{len(started)}.log").start()
        started.append(runner)
        return runner

    yield start
    for runner in started:
        if runner.process.poll() is None:
            runner.signal(signal.SIGKILL)
            runner.wait()
