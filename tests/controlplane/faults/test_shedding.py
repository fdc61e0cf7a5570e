"""Load shedding before authentication (controlplane/faults/shedding.py)."""

import time

import pytest

from namespaces.models import Namespace

pytestmark = pytest.mark.django_db
CREATE = "containers.api.v1.NamespaceService/CreateNamespace"


@pytest.fixture(autouse=True)
def behind_proxy(settings):
    settings.TRUSTED_PROXIES = ["127.0.0.1"]
    settings.SHED_QUEUE_MS = 1000


def queued_for(seconds: float, **headers) -> dict:
    return {"X-Request-Start": f"t={time.time() - seconds:.3f}", **headers}


def test_a_call_past_its_deadline_is_refused_before_authentication(rpc, admin_key):
    late = queued_for(0.6, **{"Connect-Timeout-Ms": "500"})
    result = rpc(CREATE, {"namespace": "late"}, headers=late)  # no credential: still 504, not 401
    assert result.status == 504 and result.code == "deadline_exceeded"
    assert rpc(CREATE, {"namespace": "late"}, token=admin_key, headers=late).status == 504
    assert not Namespace.objects.filter(name="late").exists()


def test_a_call_queued_too_long_is_refused_unavailable_with_retry_after(rpc, admin_key):
    result = rpc(CREATE, {"namespace": "queued"}, token=admin_key, headers=queued_for(1.5))
    assert result.status == 503 and result.code == "unavailable"
    assert result.response["Retry-After"] == "1" and "SHED_QUEUE_MS=1000" in result.body["message"]
    assert not Namespace.objects.filter(name="queued").exists()


def test_calls_within_the_limits_are_served(rpc, admin_key, settings):
    assert rpc(CREATE, {"namespace": "prompt"}, token=admin_key, headers=queued_for(0.5)).status == 200
    settings.SHED_QUEUE_MS = 0  # 0: no queue limit, only deadlines
    assert rpc(CREATE, {"namespace": "patient"}, token=admin_key, headers=queued_for(1.5)).status == 200


def test_probes_are_never_shed(client):
    headers = {"HTTP_X_REQUEST_START": f"t={time.time() - 10:.3f}", "HTTP_CONNECT_TIMEOUT_MS": "1"}
    assert client.get("/healthz", **headers).status_code == 200
    assert client.get("/readyz", **headers).status_code == 200
