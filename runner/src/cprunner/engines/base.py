"""The engine interface: what the runner needs from whatever runs containers.

An engine is called from several threads at once (one per slot, plus log and wait threads);
implementations must be thread-safe. Every engine labels what it starts, so that a runner can
find its containers again after a restart (list) and remove those it no longer holds.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol


class EngineError(Exception):
    """The engine failed; the message is safe to show to users (it never holds env values)."""


class EngineUnavailable(EngineError):
    """The engine does not answer (its service is down): the work is handed back, not failed."""


class ImageNotFound(EngineError):
    """The image is not present (and was not to be pulled, or pulling failed)."""


@dataclass(frozen=True)
class Limits:
    """Zero means no limit (the engine's default)."""

    memory_bytes: int = 0
    milli_cpus: int = 0
    max_pids: int = 0


@dataclass(frozen=True)
class ContainerSpec:
    name: str
    image: str
    command: list[str]  # empty: the image's own command
    env: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    limits: Limits = Limits()
    network: str = ""  # "" = the engine's default; "host" = the host's network
    # For engines that schedule elsewhere (kubernetes); local engines may ignore them.
    kind: str = "job"  # "job" or "sandbox"
    timeout_seconds: int = 0  # the work's own limit (the runner enforces it; a backstop for the engine)
    pull_policy: str = ""  # "always", "missing" or "never"; "" = missing


@dataclass(frozen=True)
class ExitStatus:
    exit_code: int
    signal: int = 0  # the signal that ended the main process, when one did
    error: str = ""  # it never ran (e.g. the cluster could not pull its image): RESULT_ERROR


@dataclass(frozen=True)
class Container:
    id: str
    labels: dict[str, str]


@dataclass(frozen=True)
class Image:
    id: str
    digest: str  # "sha256:…"


class Engine(Protocol):
    name: str
    images: bool  # False: the engine ignores images (no pull policy, no builds)

    def version(self) -> str:
        """A short description for operators, e.g. "podman 4.3.1"."""

    def start(self, spec: ContainerSpec) -> str:
        """Creates and starts the container; returns its id. ImageNotFound / EngineError."""

    def wait(self, container_id: str) -> ExitStatus:
        """Blocks until the container has exited."""

    def logs(self, container_id: str, follow: bool = True) -> Iterator[bytes]:
        """Its output (stdout and stderr merged) from the start; following until it exits, or
        (follow=False) what there is now: the whole output, once it has exited."""

    def stop(self, container_id: str, grace: float) -> None:
        """SIGTERM, then SIGKILL after `grace` seconds. No error if it already exited."""

    def remove(self, container_id: str) -> None:
        """Kills (SIGKILL) if still running and removes it. No error if it is gone."""

    def list(self, labels: dict[str, str]) -> list[Container]:
        """The containers (running or not) carrying all these labels."""

    def image(self, ref: str) -> Image:
        """The local image `ref`. ImageNotFound if it is not present."""

    def pull(self, ref: str) -> Image:
        """Pulls `ref` from its registry. ImageNotFound / EngineError when that fails."""
