"""The interfaces through which the control plane hands work to the platform's runtimes.

No runtime runs here. Each backend is a class named by dotted path in settings
(CONTAINERS_JOB_BACKEND, CONTAINERS_SANDBOX_BACKEND, CONTAINERS_BUILD_BACKEND) and
instantiated once per path. Calls happen inside the transaction of the change, so an
error from a backend leaves nothing recorded.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Protocol

from django.conf import settings
from django.utils.module_loading import import_string

if TYPE_CHECKING:
    from .models import Environment, Job, Sandbox


class JobBackend(Protocol):
    def submit(self, job: Job) -> None:
        """Starts the job (it is QUEUED and saved)."""

    def cancel(self, job: Job) -> None:
        """Stops the job if it runs."""


class SandboxBackend(Protocol):
    def create(self, sandbox: Sandbox, *, agent_key: str) -> None:
        """Starts the sandbox; `agent_key` is the plaintext of its agent's key, given nowhere else."""

    def delete(self, sandbox: Sandbox) -> None:
        """Stops and removes the sandbox."""


class BuildBackend(Protocol):
    def build(self, environment: Environment) -> None:
        """Starts building the environment's image."""


def job_backend() -> JobBackend | None:
    return _configured("CONTAINERS_JOB_BACKEND")


def sandbox_backend() -> SandboxBackend | None:
    return _configured("CONTAINERS_SANDBOX_BACKEND")


def build_backend() -> BuildBackend | None:
    return _configured("CONTAINERS_BUILD_BACKEND")


def preview_domain() -> str:
    return settings.CONTAINERS_PREVIEW_DOMAIN


def _configured(setting: str):
    path = getattr(settings, setting, "")
    return _instance(path) if path else None


@cache
def _instance(path: str):
    return import_string(path)()
