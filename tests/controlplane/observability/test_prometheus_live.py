"""A real Prometheus scrapes a real gunicorn with 2 workers (deploy/gunicorn.conf.py's
multiprocess set-up): the counts it stores are exact, summed over the workers, and survive a
worker killed with SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.mmap_dict import MmapedDict

from controlplane.auth import Role
from tests.support.live import ServiceProcess

from .prometheus import PrometheusProcess

TOKEN = "scrape-token-0123456789"
GET_NAMESPACE = "/containers.api.v1.NamespaceService/GetNamespace"


def call(url: str, key: str, namespace: str) -> int:
    request = urllib.request.Request(
        url + GET_NAMESPACE,
        data=json.dumps({"namespace": namespace}).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json", "Connection": "close"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def worker_pids(master: int) -> set[int]:
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return {int(pid) for pid in children}


def calls_per_worker(metrics_dir: Path) -> dict[int, int]:
    """Worker pid → RPCs it counted, read from its own multiprocess file."""
    answer = {}
    for path in metrics_dir.glob("counter_*.db"):
        values = MmapedDict.read_all_values_from_file(str(path))
        pid = int(path.stem.rsplit("_", 1)[1])
        answer[pid] = int(sum(value for key, value, *_ in values if json.loads(key)[0] == "rpc_server_requests"))
    return answer


def counts(prometheus: PrometheusProcess) -> dict[tuple[str, str], int]:
    result = prometheus.query('sum by (method, code) (rpc_server_requests_total{job="controlplane"})')
    return {(r["metric"]["method"], r["metric"]["code"]): int(float(r["value"][1])) for r in result}


def wait_for_counts(prometheus: PrometheusProcess, expected: dict, timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    seen = {}
    while time.monotonic() < deadline:
        seen = counts(prometheus)
        if seen == expected:
            return seen
        time.sleep(0.5)
    return seen


@pytest.mark.e2e
def test_prometheus_counts_every_call_across_workers_and_a_killed_worker(
    transactional_db, namespace, make_key, tmp_path
):
    admin, viewer = make_key("team-a", Role.ADMIN), make_key("team-a", Role.VIEWER)
    metrics_dir = tmp_path / "multiproc"
    service = ServiceProcess(
        env={"METRICS_BEARER_TOKEN": TOKEN, "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)},
        workers=2,
        args=("-c", "deploy/gunicorn.conf.py"),
    ).start()
    prometheus = None
    try:
        # Unauthenticated scrapes are refused (the token is configured).
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(service.url + "/metrics", timeout=5)
        assert refused.value.code == 401
        prometheus = PrometheusProcess(tmp_path, f"127.0.0.1:{service.port}", TOKEN).start()

        def mix(ok: int, denied: int, invalid: int) -> None:
            for _ in range(ok):
                assert call(service.url, admin, "team-a") == 200
            for _ in range(denied):
                assert call(service.url, viewer, "team-a") == 403
            for _ in range(invalid):
                assert call(service.url, admin, "x" * 64) == 400

        mix(ok=7, denied=3, invalid=2)
        expected = {("GetNamespace", "ok"): 7, ("GetNamespace", "permission_denied"): 3}
        expected[("GetNamespace", "invalid_argument")] = 2
        assert wait_for_counts(prometheus, expected) == expected, prometheus.log_text()
        # Each worker counted its own calls in its own file; Prometheus saw their sum.
        served = calls_per_worker(metrics_dir)
        assert sum(served.values()) == 12, served

        # A worker that served calls dies without a chance to do anything; gunicorn starts another.
        before = worker_pids(service.process.pid)
        victim = max(before, key=lambda pid: served.get(pid, 0))
        assert served.get(victim, 0) > 0, served
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while len(worker_pids(service.process.pid) - before) < 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(worker_pids(service.process.pid)) == 2

        mix(ok=5, denied=1, invalid=4)
        expected = {
            ("GetNamespace", "ok"): 12,
            ("GetNamespace", "permission_denied"): 4,
            ("GetNamespace", "invalid_argument"): 6,
        }
        assert wait_for_counts(prometheus, expected) == expected, prometheus.log_text()
        # The dead worker's file still holds its calls, counted once beside the others'.
        after = calls_per_worker(metrics_dir)
        assert after[victim] == served[victim] and sum(after.values()) == 22, (served, after)
        # Histograms add up the same way; the scrape itself was authorised.
        durations = prometheus.query('sum(rpc_server_duration_seconds_count{method="GetNamespace"})')
        assert int(float(durations[0]["value"][1])) == 22
        assert prometheus.query('up{job="controlplane"}')[0]["value"][1] == "1"
    finally:
        if prometheus:
            prometheus.stop()
        service.stop()
