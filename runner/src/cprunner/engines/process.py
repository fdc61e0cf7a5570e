"""The process engine: plain subprocesses on the runner's machine, for development and tests.

NO ISOLATION: the command runs as the runner's user, sees its files and network, and no limits
apply; the image is ignored (the command must be given). The CLI refuses it without
--i-understand-process-engine-is-unsafe.

Each process gets a record in the state directory (its pid, start time and labels) and a log
file, so that a restarted runner finds and kills what it left behind, as with containers.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from .base import Container, ContainerSpec, EngineError, ExitStatus, Image

POLL = 0.05  # seconds between checks of a process this runner did not start (after a restart)


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks (/proc/PID/stat field 22): tells a reused pid apart."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


class ProcessEngine:
    name = "process"
    images = False

    def __init__(self, state_dir: str):
        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self._children: dict[str, subprocess.Popen] = {}
        self._lock = threading.Lock()

    def version(self) -> str:
        return "process (no isolation)"

    def _record(self, container_id: str) -> Path:
        return self.state_dir / f"{container_id}.json"

    def _log(self, container_id: str) -> Path:
        return self.state_dir / f"{container_id}.log"

    def start(self, spec: ContainerSpec) -> str:
        if not spec.command:
            raise EngineError("the process engine runs no images: the work must give a command")
        container_id = uuid.uuid4().hex
        workdir = self.state_dir / container_id
        workdir.mkdir()
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(workdir), **spec.env}
        with self._log(container_id).open("wb") as log:
            try:
                child = subprocess.Popen(  # noqa: S603 - running the work's command is the point
                    spec.command,
                    env=env,
                    cwd=workdir,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # its own process group: stop/remove signal all of it
                )
            except OSError as exc:
                shutil.rmtree(workdir, ignore_errors=True)
                raise EngineError(f"could not start {spec.command[0]}: {exc.strerror}") from None
        record = {"pid": child.pid, "start_time": _start_time(child.pid), "labels": spec.labels}
        self._record(container_id).write_text(json.dumps(record))
        with self._lock:
            self._children[container_id] = child
        return container_id

    def _alive(self, container_id: str) -> int | None:
        """The pid, if the process still runs (and is the one started)."""
        try:
            record = json.loads(self._record(container_id).read_text())
        except (OSError, ValueError):
            return None
        with self._lock:
            child = self._children.get(container_id)
        if child is not None:
            return child.pid if child.poll() is None else None
        return record["pid"] if _start_time(record["pid"]) == record["start_time"] else None

    def wait(self, container_id: str) -> ExitStatus:
        with self._lock:
            child = self._children.get(container_id)
        if child is None:  # started by an earlier run of the runner: poll
            while self._alive(container_id):
                time.sleep(POLL)
            return ExitStatus(exit_code=-1)
        code = child.wait()
        if code < 0:
            return ExitStatus(exit_code=128 - code, signal=-code)
        return ExitStatus(exit_code=code)

    def logs(self, container_id: str, follow: bool = True) -> Iterator[bytes]:
        try:
            log = self._log(container_id).open("rb")
        except OSError:
            return
        with log:
            while True:
                alive = self._alive(container_id)
                data = log.read(65536)
                if data:
                    yield data
                elif not alive or not follow:
                    return
                else:
                    time.sleep(POLL)

    def _signal(self, pid: int, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signum)

    def stop(self, container_id: str, grace: float) -> None:
        pid = self._alive(container_id)
        if pid is None:
            return
        self._signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and self._alive(container_id):
            time.sleep(POLL)
        if self._alive(container_id):
            self._signal(pid, signal.SIGKILL)

    def remove(self, container_id: str) -> None:
        pid = self._alive(container_id)
        if pid is not None:
            self._signal(pid, signal.SIGKILL)
        with self._lock:
            child = self._children.pop(container_id, None)
        if child is not None:
            child.wait()
        self._record(container_id).unlink(missing_ok=True)
        self._log(container_id).unlink(missing_ok=True)
        shutil.rmtree(self.state_dir / container_id, ignore_errors=True)

    def list(self, labels: dict[str, str]) -> list[Container]:
        found = []
        for path in self.state_dir.glob("*.json"):
            try:
                record = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if all(record["labels"].get(k) == v for k, v in labels.items()):
                found.append(Container(id=path.stem, labels=record["labels"]))
        return found

    def image(self, ref: str) -> Image:
        raise EngineError("the process engine runs no images: builds need the podman engine")

    def pull(self, ref: str) -> Image:
        return self.image(ref)
