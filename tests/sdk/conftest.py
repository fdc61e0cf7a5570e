"""The SDK and cpctl against a real gunicorn on loopback, with the recording backends so
every containers method (sandboxes, builds, preview URLs) has something to call."""

from __future__ import annotations

import pytest

from tests.support.backend_fixtures import BACKEND_SETTINGS
from tests.support.live import ServiceProcess


@pytest.fixture(scope="session")
def sdk_service(django_db_setup, django_db_blocker):
    service = ServiceProcess(env={**BACKEND_SETTINGS, "CONTAINERS_PREVIEW_DOMAIN": "preview.example.test"}).start()
    yield service
    service.stop()
