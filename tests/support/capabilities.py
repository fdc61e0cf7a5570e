"""Which capabilities the deployment serves (sandboxes, builds, preview URLs): the `capabilities` and
`no_capabilities` fixtures, a plugin of tests/conftest.py, so every folder's tests can ask for them."""

from __future__ import annotations

import pytest
from django.test import override_settings

# Sandboxes and builds served (runners run them), and preview URLs; environment values.
CAPABILITY_SETTINGS = {
    "CONTAINERS_SANDBOXES_ENABLED": "true",
    "CONTAINERS_BUILDS_ENABLED": "true",
    "CONTAINERS_PREVIEW_DOMAIN": "preview.example.test",
}


@pytest.fixture
def capabilities():
    """Every capability served; the Runtime acquires sandboxes as a runner would."""
    with override_settings(
        CONTAINERS_SANDBOXES_ENABLED=True,
        CONTAINERS_BUILDS_ENABLED=True,
        CONTAINERS_PREVIEW_DOMAIN="preview.example.test",
    ):
        yield Runtime()


@pytest.fixture
def no_capabilities():
    with override_settings(
        CONTAINERS_SANDBOXES_ENABLED=False, CONTAINERS_BUILDS_ENABLED=False, CONTAINERS_PREVIEW_DOMAIN=""
    ):
        yield


class Runtime:
    """A runner in this process (the leases service), so that tests get what a runner gets:
    e.g. each sandbox's agent key, minted when the sandbox is acquired."""

    def __init__(self):
        self.keys: dict[str, str] = {}

    def agent_key(self, sandbox_id: str) -> str:
        if sandbox_id not in self.keys:
            self.acquire_sandboxes()
        return self.keys[sandbox_id]

    def acquire_sandboxes(self) -> None:
        from controlplane.auth import Kind, Principal
        from runners.services import issue_runner
        from workloads.services import leases

        runner, _ = issue_runner(actor=Principal.system("tests"), name="test runner")
        principal = Principal(kind=Kind.RUNNER, key_id=runner.key.key_id)
        while (work := leases.claim(principal, runner, [leases.SANDBOX])) is not None:
            self.keys[work.work_id] = work.agent_key
