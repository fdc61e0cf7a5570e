"""Deadlines count from arrival: a saturated gunicorn answers late calls 504 at once and runs none of them.

The client plays the recommended proxy: it stamps X-Request-Start when it sends, and the
service trusts that header from 127.0.0.1 (TRUSTED_PROXIES). One sync worker serves 32 clients
calling RunJob back to back, and a slow database keeps it busy whatever the machine's speed:
the test holds the namespace's lock (PostgreSQL: the row; SQLite: the write lock) for 0.15 s of
every 0.17 s, so a RunJob can stall the worker for up to 0.15 s and the queue stays longer than
the calls' 500 ms deadline. (PostgreSQL cancels a lock wait at the deadline; SQLite's wait for its
write lock does not end early, which is why the stall is kept short.)
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
import uuid

import pytest
from django.db import connections, transaction

from controlplane.auth import Role
from namespaces.models import Namespace
from tests.support.live import ServiceProcess
from workloads.models import Job

TIMEOUT_MS = 500
CLIENTS = 32
SECONDS = 6


@pytest.fixture
def saturated_service(transactional_db):
    service = ServiceProcess(env={"TRUSTED_PROXIES": "127.0.0.1", "SHED_QUEUE_MS": "0"}, workers=1).start()
    yield service
    service.stop()


def run_job(url: str, key: str) -> tuple[int, str, float]:
    body = json.dumps({"namespace": "team-a", "image": "alpine", "requestId": str(uuid.uuid4())}).encode()
    sent = time.time()
    headers = {
        "Content-Type": "application/json",
        "Authorization": f"Bearer {key}",
        "Connect-Timeout-Ms": str(TIMEOUT_MS),
        "X-Request-Start": f"t={sent:.3f}",
    }
    request = urllib.request.Request(url + "/containers.api.v1.JobService/RunJob", data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, payload = response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        status, payload = error.code, json.loads(error.read())
    answer = payload["job"]["jobId"] if status == 200 else payload["code"]
    return status, answer, time.time() - sent


def test_a_saturated_server_answers_deadline_exceeded_within_the_deadline(saturated_service, namespace, make_key):
    key = make_key("team-a", Role.OPERATOR)
    results: list[tuple[int, str, float]] = []
    stop_at = time.monotonic() + SECONDS

    def client():
        while time.monotonic() < stop_at:
            results.append(run_job(saturated_service.url, key))

    def slow_database():
        try:
            while time.monotonic() < stop_at:
                with transaction.atomic():
                    Namespace.objects.select_for_update().get(name="team-a")
                    time.sleep(0.15)
                time.sleep(0.02)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    threads.append(threading.Thread(target=slow_database))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    late = sorted(seconds for status, _, seconds in results if status == 504)
    served = [answer for status, answer, _ in results if status == 200]
    assert {status for status, _, _ in results} <= {200, 504}, {s for s, _, _ in results}
    assert len(late) >= CLIENTS, f"the server was not saturated: {len(late)} of {len(results)} late"
    assert {answer for status, answer, _ in results if status == 504} == {"deadline_exceeded"}
    # Answered about when the deadline passed, not after the whole queue (the p95 bound leaves room
    # for a busy shared machine).
    median, p95 = late[len(late) // 2], late[int(len(late) * 0.95)]
    assert median < TIMEOUT_MS / 1000 + 0.25, (median, late[-5:])
    assert p95 < TIMEOUT_MS / 1000 + 1.0, (p95, late[-5:])
    # No call answered 504 created a job: the jobs are exactly those answered 200.
    assert sorted(Job.objects.values_list("job_id", flat=True)) == sorted(served)
    print(
        f"\n{len(results)} calls: {len(served)} served, {len(late)} deadline_exceeded "
        f"(median {median:.2f} s, p95 {p95:.2f} s, max {late[-1]:.2f} s)"
    )
