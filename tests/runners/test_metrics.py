"""The runners' metrics: each active runner's last call at scrape time, heartbeats by result."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from prometheus_client import REGISTRY

from controlplane.auth import Kind, Principal
from runners.metrics import RunnerCollector
from runners.models import Runner
from runners.services import issue_runner, revoke_runner
from workloads.services import jobs, leases

pytestmark = pytest.mark.django_db
SYSTEM = Principal.system("tests")
HEARTBEAT = "containers.runtime.v1.RunnerService/Heartbeat"


def samples(collector: RunnerCollector) -> dict[tuple, float]:
    return {(s.name, *s.labels.values()): s.value for family in collector.collect() for s in family.samples}


def test_each_active_runner_has_its_last_seen_age(namespace, settings, monkeypatch):
    settings.METRICS_QUERY_CACHE_SECONDS = 60
    now = timezone.now()
    recent, silent, never, gone = (issue_runner(actor=SYSTEM, name=n)[0] for n in ("a", "b", "c", "d"))
    Runner.objects.filter(pk=recent.pk).update(last_seen_at=now - timedelta(seconds=7))
    Runner.objects.filter(pk=silent.pk).update(last_seen_at=now - timedelta(seconds=300))
    Runner.objects.filter(pk=never.pk).update(created_at=now - timedelta(seconds=90))  # issued, never called
    revoke_runner(actor=SYSTEM, runner_id=gone.runner_id)
    monkeypatch.setattr("runners.metrics.timezone.now", lambda: now)
    collector = RunnerCollector()

    with CaptureQueriesContext(connection) as first:
        seen = samples(collector)
    assert seen == {
        ("controlplane_runners", "active"): 3,
        ("controlplane_runners", "revoked"): 1,
        ("controlplane_runner_last_seen_age_seconds", recent.runner_id): 7.0,
        ("controlplane_runner_last_seen_age_seconds", silent.runner_id): 300.0,
        ("controlplane_runner_last_seen_age_seconds", never.runner_id): 90.0,
    }
    assert len(first) == 1
    with CaptureQueriesContext(connection) as second:
        assert samples(collector) == seen
    assert len(second) == 0  # within METRICS_QUERY_CACHE_SECONDS


def test_heartbeats_are_counted_by_result(rpc, namespace):
    record, plaintext = issue_runner(actor=SYSTEM, name="runner")
    jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox")
    work = leases.claim(Principal(kind=Kind.RUNNER, key_id=record.key.key_id), record, [leases.JOB])
    ok, not_held = (
        REGISTRY.get_sample_value("controlplane_runner_heartbeats_total", {"result": r}) for r in ("ok", "not_held")
    )
    body = {"workId": work.work_id, "leaseToken": work.lease_token}
    assert rpc(HEARTBEAT, body, token=plaintext).status == 200
    assert rpc(HEARTBEAT, body, token=plaintext).status == 200
    assert rpc(HEARTBEAT, {**body, "leaseToken": "not-the-token"}, token=plaintext).status == 400
    assert rpc(HEARTBEAT, {**body, "workId": "nonsense"}, token=plaintext).status == 400  # not a lease at all
    assert REGISTRY.get_sample_value("controlplane_runner_heartbeats_total", {"result": "ok"}) == ok + 2
    assert REGISTRY.get_sample_value("controlplane_runner_heartbeats_total", {"result": "not_held"}) == not_held + 1
