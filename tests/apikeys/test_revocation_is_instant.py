"""Once RevokeApiKey has answered, no worker accepts the key (issue 22, finding 6).

NOTIFY is asynchronous: a call on a fresh connection to another worker right after the answer
was sometimes accepted (5 of 141 rounds) because that worker's listener had not yet been sent the
revocation. The revoking call now answers only after every listener has confirmed it applied it
(apikeys.keycache.await_everywhere). Two gunicorn workers, each with its cache warm, many rounds.
On SQLite there is no cache, and every call looks its key up.
"""

from __future__ import annotations

import http.client
import json
import time

import pytest
from django.db import connection

from apikeys.models import ApiKey
from controlplane.auth import Role
from tests.support.live import ServiceProcess

pytestmark = pytest.mark.e2e

NS = "/containers.api.v1.NamespaceService/"
ROUNDS = 100
WARM_CALLS = 8  # fresh connections: gunicorn's workers take turns accepting, so both cache the key
CALLS_AFTER_REVOKE = 4


def call(port: int, method: str, body: dict, token: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        conn.request("POST", NS + method, body=json.dumps(body).encode(), headers=headers)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


@pytest.fixture
def service(transactional_db):
    service = ServiceProcess(workers=2).start()
    yield service
    service.stop()


def test_no_worker_accepts_a_key_after_revoke_answered(service, namespace, make_key):
    admin = make_key("team-a", Role.ADMIN)
    accepted, revoke_seconds = [], []
    for round_ in range(ROUNDS):
        token = make_key("team-a", Role.ADMIN)  # GetNamespace is for admins
        key_id = ApiKey.objects.latest("id").key_id
        for _ in range(WARM_CALLS):
            assert call(service.port, "GetNamespace", {"namespace": "team-a"}, token) == 200
        started = time.monotonic()
        assert call(service.port, "RevokeApiKey", {"keyId": key_id}, admin) == 200
        revoke_seconds.append(time.monotonic() - started)
        statuses = [
            call(service.port, "GetNamespace", {"namespace": "team-a"}, token) for _ in range(CALLS_AFTER_REVOKE)
        ]
        assert set(statuses) <= {200, 401}, statuses
        if 200 in statuses:
            accepted.append((round_, statuses))
    revoke_seconds.sort()
    p50, worst = revoke_seconds[len(revoke_seconds) // 2], revoke_seconds[-1]
    print(
        f"\nRevokeApiKey over HTTP ({connection.vendor}): p50 {p50 * 1000:.1f} ms, max {worst * 1000:.1f} ms;"
        f" rounds accepting the key afterwards: {len(accepted)} of {ROUNDS}"
    )
    assert "not confirmed" not in service.log()  # every listener confirmed within the wait
    assert accepted == [], f"{len(accepted)} of {ROUNDS} rounds accepted the key after RevokeApiKey answered"
