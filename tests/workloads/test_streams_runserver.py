"""`make run` streams too: Django's runserver (a thread per request) passes each message on
as it is sent."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request

import pytest

from containers.api.v1 import job_pb2 as jpb
from containers.api.v1.job_connect import JobServiceClientSync
from controlplane.auth import Role
from tests.support.live import ROOT, ServiceProcess, free_port, stop_process

from .conftest import Collector, bearer
from .test_streams_live import is_bookmark

pytestmark = pytest.mark.django_db(transaction=True)


def test_runserver_streams_watch_events_as_they_happen(namespace, make_key):
    port = free_port()
    env = ServiceProcess(env={"STREAM_POLL_SECONDS": "0.2"}).env  # the test database's settings; not started
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(url + "/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        key = make_key("team-a", Role.OPERATOR)
        api = JobServiceClientSync(url, timeout_ms=30_000)
        watch = Collector(api.watch_jobs(jpb.WatchJobsRequest(namespace="team-a"), headers=bearer(key)))
        assert is_bookmark(watch.take(15))
        job = api.run_job(jpb.RunJobRequest(namespace="team-a", image="busybox"), headers=bearer(key)).job
        event = watch.take(5)  # while the stream stays open
        assert (event.type, event.job.job_id) == (jpb.WATCH_EVENT_TYPE_ADDED, job.job_id)
    finally:
        stop_process(server)
