"""A database outage under a steady stream of calls, against a real gunicorn and a real PostgreSQL.

The test owns a private cluster (tests/controlplane/faults/cluster.py), stops it (`pg_ctl stop -m fast`)
for a few seconds while two client threads keep calling RunJob through gunicorn, then starts
it again. Each call carries its own requestId, and calls refused during the outage are retried
afterwards with the same id, as the SDK does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass

import psycopg
import pytest

from tests.controlplane.faults.cluster import PrivateCluster
from tests.support.live import ROOT, ServiceProcess

POOL_TIMEOUT = 1.0  # DATABASE_POOL_TIMEOUT for the service under test
SLACK = 1.0  # scheduling on a small shared machine
RUN_JOB = "/containers.api.v1.JobService/RunJob"


@dataclass
class Call:
    request_id: str
    sent: float
    done: float
    status: int
    body: dict
    retry_after: str | None

    @property
    def code(self) -> str:
        return self.body.get("code", "") if self.status != 200 else ""


def post(url: str, key: str, request_id: str, timeout: float = 30) -> Call:
    data = json.dumps({"namespace": "team-a", "image": "alpine", "requestId": request_id}).encode()
    request = urllib.request.Request(
        url + RUN_JOB,
        data=data,
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
    )
    sent = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, body, retry_after = response.status, response.read(), response.headers.get("Retry-After")
    except urllib.error.HTTPError as error:
        status, body, retry_after = error.code, error.read(), error.headers.get("Retry-After")
    return Call(request_id, sent, time.monotonic(), status, json.loads(body or b"{}"), retry_after)


def status_of(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def manage(database_url: str, *args: str) -> str:
    env = {**os.environ, "DATABASE_URL": database_url}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture
def cluster():
    cluster = PrivateCluster().init()
    yield cluster
    cluster.destroy()


@pytest.fixture
def service(cluster):
    manage(cluster.url, "migrate", "--noinput")
    manage(cluster.url, "create_namespace", "team-a")
    env = {
        "DATABASE_URL": cluster.url,
        "DATABASE_POOL": "true",
        "DATABASE_POOL_TIMEOUT": str(POOL_TIMEOUT),
    }
    service = ServiceProcess(env=env, workers=2).start()
    yield service
    service.stop()


def test_an_outage_answers_unavailable_fast_and_recovers_within_a_second(cluster, service):
    key = manage(cluster.url, "issue_api_key", "--namespace", "team-a", "--role", "OPERATOR", "--name", "load")
    key = key.strip()
    calls: list[Call] = []
    running = threading.Event()
    running.set()

    def stream():
        while running.is_set():
            calls.append(post(service.url, key, str(uuid.uuid4())))
            time.sleep(0.02)

    clients = [threading.Thread(target=stream) for _ in range(2)]
    for client in clients:
        client.start()
    try:
        time.sleep(1.5)
        stopping = time.monotonic()
        cluster.stop()
        stopped = time.monotonic()
        time.sleep(1.0)
        probes_down = (status_of(service.url + "/healthz"), status_of(service.url + "/readyz"))
        time.sleep(2.0)
        starting = time.monotonic()
        cluster.start()
        up = time.monotonic()
        time.sleep(3.0)
    finally:
        running.clear()
        for client in clients:
            client.join(60)
    log = service.log()[-3000:]

    # Every call was answered 200 or 503 `unavailable` (with Retry-After), never 500, never hung.
    assert {c.status for c in calls} <= {200, 503}, [(c.status, c.body) for c in calls if c.status not in (200, 503)]
    refused = [c for c in calls if c.status == 503]
    assert all(c.code == "unavailable" and c.retry_after == "1" for c in refused)
    slowest = max(c.done - c.sent for c in calls)
    assert slowest <= POOL_TIMEOUT + SLACK, (slowest, log)

    before = [c for c in calls if c.done < stopping]
    down = [c for c in calls if c.sent >= stopped and c.done <= starting]
    after = [c for c in calls if c.sent >= up]
    assert before and all(c.status == 200 for c in before)
    assert len(down) >= 3 and all(c.status == 503 for c in down), [(c.status, c.body) for c in down]
    assert probes_down == (200, 503)  # alive, not ready

    # Recovery: a call succeeds within 1 s of the database accepting connections, and all later ones do.
    first_ok = min(c.done for c in after if c.status == 200)
    assert first_ok - up < 1.0, (first_ok - up, log)
    assert all(c.status == 200 for c in after if c.sent >= up + 1.0)
    assert status_of(service.url + "/readyz") == 200

    # Refused calls retried with the same requestId succeed; nothing was written twice or half-written.
    retries = [post(service.url, key, c.request_id) for c in refused]
    assert all(r.status == 200 for r in retries), [r.body for r in retries if r.status != 200]
    answered = {c.request_id: c.body["job"]["jobId"] for c in [*calls, *retries] if c.status == 200}
    with psycopg.connect(cluster.url) as db:
        jobs = db.execute("SELECT job_id FROM containers_job").fetchall()
        audited = db.execute("SELECT count(*) FROM audit_auditevent WHERE action = 'job.run'").fetchone()[0]
        records = db.execute("SELECT request_id, result FROM idempotency_requestrecord").fetchall()
    assert sorted(job_id for (job_id,) in jobs) == sorted(answered.values())
    assert len(set(answered.values())) == len(answered) == audited
    assert dict(records) == answered
    print(
        f"\n{len(calls)} calls; {len(refused)} answered 503 during the outage (median "
        f"{sorted(c.done - c.sent for c in down)[len(down) // 2]:.2f} s); slowest {slowest:.2f} s; "
        f"first 200 {first_ok - up:.2f} s after the database was back; {len(jobs)} jobs, none twice"
    )
