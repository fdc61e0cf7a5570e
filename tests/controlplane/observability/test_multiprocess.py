"""prometheus_client's multiprocess mode, as under gunicorn (deploy/gunicorn.conf.py): the
runners' counters of two processes add up in a scrape; the scrape-time gauges, read from the
database by the process that answers, appear once however many workers counted."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from controlplane.auth import Principal
from runners.services import issue_runner
from tests.support import live
from workloads.services.jobs import run_job

WORKER = """
import sys, django
django.setup()
from controlplane.observability import metrics
metrics.record_lease_expiries("job", 2)
metrics.record_job_outcome("succeeded")
metrics.record_heartbeat(held=True)
metrics.record_heartbeat(held=False)
if sys.argv[1:] == ["scrape"]:
    from controlplane.observability.exposition import exposition
    sys.stdout.write(exposition().decode())
"""


def worker(env: dict, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", WORKER, *args], env=env, cwd=live.ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.django_db(transaction=True)
def test_two_workers_counters_add_up_and_gauges_appear_once(namespace, tmp_path):
    run_job(actor=Principal.system(), namespace="team-a", image="busybox")
    issue_runner(actor=Principal.system(), name="runner")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "controlplane.settings",
        "DATABASE_URL": live.test_database_url(),  # the name is a test to pytest
        "DATABASE_POOL": "false",
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path),
    }
    worker(env)
    lines = worker(env, "scrape").splitlines()
    assert len(list(tmp_path.glob("counter_*.db"))) == 2  # one file per process

    for line in (
        'controlplane_lease_expiries_total{kind="job"} 4.0',
        'controlplane_lease_expiries_total{kind="sandbox"} 0.0',
        'controlplane_job_outcomes_total{outcome="succeeded"} 2.0',
        'controlplane_runner_heartbeats_total{result="ok"} 2.0',
        'controlplane_runner_heartbeats_total{result="not_held"} 2.0',
    ):
        assert line in lines, line
    for gauge in ('controlplane_work_queued{kind="job"} ', 'controlplane_runners{state="active"} '):
        assert [line for line in lines if line.startswith(gauge)] == [gauge + "1.0"]
    assert len([line for line in lines if line.startswith("controlplane_runner_last_seen_age_seconds{")]) == 1
