"""Starting podman's API and cprunner from tests, here and in end-to-end tests elsewhere.

from tests.runner.support import PodmanService, RunnerProcess

with PodmanService(tmp_dir) as podman:            # builds the test image first
    runner = RunnerProcess(url, key, "my-runner", "--engine", "podman",
                           "--podman-socket", podman.socket, log_path=tmp_dir / "runner.log").start()
    ...
    runner.stop()                                   # SIGTERM, then SIGKILL after 10 s
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from cprunner.cli import containers_conf
from cprunner.engines.podman import PodmanEngine

from tests.support.live import ROOT, stop_process

IMAGE = "localhost/cp-busybox:latest"


def build_test_image() -> None:
    env = {**os.environ, "CONTAINERS_CONF": containers_conf()}
    subprocess.run([ROOT / "scripts" / "test-image"], check=True, env=env, timeout=300)


class PodmanService:
    """`cprunner podman-service` on a socket in `directory`, after scripts/test-image."""

    def __init__(self, directory: Path):
        self.socket = str(directory / "podman.sock")
        self.log_path = directory / "podman-service.log"
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> PodmanService:
        build_test_image()
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "cprunner", "podman-service", "--socket", self.socket], stdout=log, stderr=log
            )
        engine = PodmanEngine(self.socket)
        deadline = time.monotonic() + 30
        while True:
            try:
                engine.version()
                return self
            except Exception:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.__exit__()
                    raise AssertionError(f"podman's API did not come up: {self.log_path.read_text()}") from None
                time.sleep(0.1)

    def __exit__(self, *exc) -> None:
        stop_process(self.process)


class RunnerProcess:
    """`python -m cprunner …` with CP_URL and CP_RUNNER_KEY in its environment, as operators start it.

    Short polls and grace periods, and DEBUG logs in `log_path`, suit tests.
    """

    def __init__(self, url: str, key: str, name: str, *args: str, log_path: Path):
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
