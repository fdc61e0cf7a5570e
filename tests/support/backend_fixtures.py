"""The recording backends (tests/support/backends.py) configured in settings: the `backends` and
`no_backends` fixtures, a plugin of tests/conftest.py, so every folder's tests can ask for them."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.test import override_settings

from workloads import backends as containers_backends

BACKEND_SETTINGS = {
    "CONTAINERS_JOB_BACKEND": "tests.support.backends.RecordingJobBackend",
    "CONTAINERS_SANDBOX_BACKEND": "tests.support.backends.RecordingSandboxBackend",
    "CONTAINERS_BUILD_BACKEND": "tests.support.backends.RecordingBuildBackend",
    "CONTAINERS_PREVIEW_DOMAIN": "preview.example.test",
}


@dataclass
class Backends:
    jobs: object
    sandboxes: object
    builds: object


@pytest.fixture
def backends():
    """Every capability configured, with fresh recording backends."""
    containers_backends._instance.cache_clear()
    with override_settings(**BACKEND_SETTINGS):
        yield Backends(
            jobs=containers_backends.job_backend(),
            sandboxes=containers_backends.sandbox_backend(),
            builds=containers_backends.build_backend(),
        )
    containers_backends._instance.cache_clear()


@pytest.fixture
def no_backends():
    with override_settings(**dict.fromkeys(BACKEND_SETTINGS, "")):
        yield
