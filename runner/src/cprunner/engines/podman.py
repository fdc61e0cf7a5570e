"""The podman engine: podman's REST API (`podman system service`) through podman-py.

podman-py 5.8 against podman 4.3's API: create/start/wait/logs/stop/remove/list/inspect work as
documented; `images.pull` does not raise when the pull fails (4.3 reports the failure inside
the progress stream), so `pull` reads that stream itself.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import podman
import requests
from podman import api as podman_api
from podman import errors as podman_errors

from .base import Container, ContainerSpec, EngineError, EngineUnavailable, ExitStatus, Image, ImageNotFound

CPU_PERIOD = 100_000  # microseconds; the CFS quota is milli_cpus * CPU_PERIOD / 1000
# podman's wait polls the container's state (default every 250 ms, about 125 ms late on
# average). Most jobs are short, so the first seconds are polled every 50 ms (~0.4% of a core
# per container in podman's service, measured); a longer job falls back to the default.
QUICK_WAIT_INTERVAL, QUICK_WAIT_SECONDS = "50ms", 5.0
CONNECT_SECONDS = 10.0
# Waiting for an exit and following output may take as long as the work runs: a read
# timeout (podman-py's default is the client's 60 s) would end them while the work is fine.
UNTIL_DONE = (CONNECT_SECONDS, None)


def default_socket() -> str:
    return "/run/podman/podman.sock"


class PodmanEngine:
    name = "podman"
    images = True

    def __init__(self, socket_path: str | None = None, timeout: float = 60.0):
        self.base_url = f"unix://{socket_path or default_socket()}"
        self.timeout = timeout
        # One client per thread: podman-py's requests session is not documented thread-safe.
        self._local = threading.local()

    @property
    def client(self) -> podman.PodmanClient:
        client = getattr(self._local, "client", None)
        if client is None:
            client = self._local.client = podman.PodmanClient(base_url=self.base_url, timeout=self.timeout)
        return client

    @contextlib.contextmanager
    def _api(self, what: str, *, missing_ok: bool = False):
        """podman-py's errors as the engine's: unreachable (EngineUnavailable), gone (ignored
        when missing_ok), or failed (EngineError, with podman's explanation)."""
        try:
            yield
        except podman_errors.NotFound:
            if not missing_ok:
                raise EngineError(f"podman could not {what}: no such container") from None
        except podman_errors.APIError as exc:
            if exc.response is None:  # podman-py wraps connection errors so
                raise EngineUnavailable(f"podman's API at {self.base_url} does not answer ({what})") from None
            raise EngineError(f"podman could not {what}: {exc.explanation or exc}") from None

    def version(self) -> str:
        with self._api("tell its version"):
            return f"podman {self.client.version()['Version']}"

    def start(self, spec: ContainerSpec) -> str:
        # init: catatonit as PID 1 forwards signals and reaps zombies, so a command that sets no
        # SIGTERM handler (PID 1 ignores it) still stops at SIGTERM rather than at the SIGKILL.
        options: dict = {"labels": spec.labels, "environment": spec.env, "name": spec.name, "init": True}
        if spec.command:
            options["command"] = spec.command
        if spec.limits.memory_bytes:
            options["mem_limit"] = spec.limits.memory_bytes
        if spec.limits.milli_cpus:
            options["cpu_period"] = CPU_PERIOD
            options["cpu_quota"] = spec.limits.milli_cpus * CPU_PERIOD // 1000
        if spec.limits.max_pids:
            options["pids_limit"] = spec.limits.max_pids
        if spec.network:
            options["network_mode"] = spec.network
        try:
            with self._api("create the container"):
                container = self.client.containers.create(spec.image, **options)
        except EngineError:
            self.image(spec.image)  # a missing image: a clear ImageNotFound, not create's generic 500
            raise
        try:
            with self._api("start the container"):
                container.start()
        except EngineError:
            self.remove(container.id)
            raise
        return container.id

    def wait(self, container_id: str) -> ExitStatus:
        code = self._wait(container_id, QUICK_WAIT_INTERVAL, (CONNECT_SECONDS, QUICK_WAIT_SECONDS))
        if code is None:  # still running: podman's own interval from now on
            code = self._wait(container_id, "", UNTIL_DONE)
        # podman reports a process killed by signal N as 128 + N (as a shell does).
        return ExitStatus(exit_code=code, signal=code - 128 if 128 < code <= 128 + 64 else 0)

    def _wait(self, container_id: str, interval: str, timeout) -> int | None:
        """The exit code, or None when `timeout` passed first."""
        params = {"condition": ["exited"], **({"interval": interval} if interval else {})}
        with self._api(f"wait for {container_id[:12]}"):
            try:
                response = self.client.api.post(f"/containers/{container_id}/wait", params=params, timeout=timeout)
            except podman_errors.APIError as exc:
                if isinstance(exc.__cause__, requests.ReadTimeout):
                    return None
                raise
            response.raise_for_status()
            return int(response.json())

    def logs(self, container_id: str, follow: bool = True) -> Iterator[bytes]:
        params = {"follow": follow, "stdout": True, "stderr": True}
        with self._api(f"read the output of {container_id[:12]}", missing_ok=True):
            response = self.client.api.get(
                f"/containers/{container_id}/logs", params=params, stream=True, timeout=UNTIL_DONE
            )
            response.raise_for_status()
            yield from podman_api.stream_frames(response)

    def stop(self, container_id: str, grace: float) -> None:
        with self._api(f"stop {container_id[:12]}", missing_ok=True):
            self.client.containers.get(container_id).stop(timeout=max(0, round(grace)))

    def remove(self, container_id: str) -> None:
        # podman-py's remove() has no timeout: a forced removal would send SIGTERM and wait the
        # container's stop timeout (10 s) before SIGKILL. timeout=0: SIGKILL at once.
        with self._api(f"remove {container_id[:12]}", missing_ok=True):
            response = self.client.api.delete(f"/containers/{container_id}", params={"force": True, "timeout": 0})
            response.raise_for_status()

    def list(self, labels: dict[str, str]) -> list[Container]:
        with self._api("list containers"):
            found = self.client.containers.list(all=True, filters=[f"label={k}={v}" for k, v in labels.items()])
        containers = [Container(id=c.id, labels=dict(c.labels or {})) for c in found]
        # Filters on one key may be OR'ed by some podman versions: keep only full matches.
        return [c for c in containers if all(c.labels.get(k) == v for k, v in labels.items())]

    def image(self, ref: str) -> Image:
        with self._api(f"inspect image {ref}"):
            try:
                image = self.client.images.get(ref)
            except podman_errors.ImageNotFound:
                raise ImageNotFound(f"image {ref} is not present on this runner") from None
        return Image(id=image.id, digest=image.attrs.get("Digest") or "")

    def pull(self, ref: str) -> Image:
        failure = ""
        try:
            with self._api(f"pull {ref}"):
                for event in self.client.images.pull(ref, stream=True, decode=True):
                    failure = event.get("error") or failure
        except EngineUnavailable:
            raise
        except EngineError as exc:
            failure = str(exc)
        if failure:
            raise ImageNotFound(f"image {ref} could not be pulled: {failure}")
        return self.image(ref)
