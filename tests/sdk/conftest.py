"""The SDK and cpctl against a real gunicorn on loopback, serving every containers method
(sandboxes, builds, preview URLs)."""

from __future__ import annotations

import pytest

from tests.support.capabilities import CAPABILITY_SETTINGS
from tests.support.live import ServiceProcess


@pytest.fixture(scope="session")
def sdk_service(django_db_setup, django_db_blocker):
    service = ServiceProcess(env=CAPABILITY_SETTINGS).start()
    yield service
    service.stop()


# The streaming pool and a runner (tests/workloads/conftest.py), for the stream commands.
from tests.workloads.conftest import runner, stream_server  # noqa: E402, F401
