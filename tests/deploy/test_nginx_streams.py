"""The recommended streaming set-up end to end: nginx (deploy/nginx.conf) in front of the
sync pool (deploy/gunicorn.conf.py) and the streaming pool (deploy/gunicorn-streams.conf.py).
A watch through nginx gets each change as it happens (no response buffering), a log follower
every line, and unary calls keep answering from the sync pool meanwhile."""

from __future__ import annotations

import time
from contextlib import ExitStack

import pytest
from pyqwest import HTTPVersion, SyncClient, SyncHTTPTransport

from containers.api.v1 import job_pb2 as jpb
from containers.api.v1.job_connect import JobServiceClientSync
from containers.runtime.v1 import runner_pb2 as rpb
from controlplane.auth import Role
from runners.services import issue_runner
from tests.runners.conftest import SYSTEM, Runner
from tests.support.live import free_port
from tests.workloads.conftest import Collector, bearer

from .test_nginx import _gunicorn_from_deploy_config, _nginx, _unprivileged_dir

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_streams_pass_through_nginx_as_they_happen(namespace, make_key):
    operator = make_key("team-a", Role.OPERATOR)
    with ExitStack() as stack:
        workdir = stack.enter_context(_unprivileged_dir())
        unary, streams = workdir / "gunicorn.sock", workdir / "streams.sock"
        stack.enter_context(_gunicorn_from_deploy_config(unary))
        env = {"STREAM_BOOKMARK_SECONDS": "2", "STREAM_POLL_SECONDS": "0.2"}  # SQLite polls
        stack.enter_context(_gunicorn_from_deploy_config(streams, "deploy/gunicorn-streams.conf.py", 1, env))
        http_port, https_port = free_port(), free_port()
        stack.enter_context(_nginx(workdir, unary, http_port, https_port, streams))
        url = f"https://127.0.0.1:{https_port}"
        transport = SyncHTTPTransport(tls_ca_cert=(workdir / "ca.pem").read_bytes(), http_version=HTTPVersion.HTTP1)
        http = SyncClient(transport)
        jobs_api = JobServiceClientSync(url, timeout_ms=60_000, http_client=http)
        _, runner_key = issue_runner(actor=SYSTEM, name="nginx runner", namespaces=())
        runner = Runner(url, runner_key)
        runner.client = type(runner.client)(url, timeout_ms=30_000, http_client=http)

        watch = Collector(jobs_api.watch_jobs(jpb.WatchJobsRequest(namespace="team-a"), headers=bearer(operator)))
        assert watch.take().type == jpb.WATCH_EVENT_TYPE_BOOKMARK
        job = jobs_api.run_job(jpb.RunJobRequest(namespace="team-a", image="busybox"), headers=bearer(operator)).job
        arrived = watch.take(5)
        assert (arrived.job.job_id, arrived.job.state) == (job.job_id, jpb.JOB_STATE_QUEUED)
        work = runner.acquire()  # the streaming pool serves the runner API too
        assert watch.take(5).job.state == jpb.JOB_STATE_RUNNING
        request = jpb.FollowJobLogsRequest(job_id=job.job_id)
        follow = Collector(jobs_api.follow_job_logs(request, headers=bearer(operator)))
        assert follow.take().next_offset == 0
        offset, delays = 0, []
        for i in range(5):
            offset = runner.append(work, offset, f"nginx line {i}\n".encode())
            sent = time.monotonic()
            assert follow.take(5).data == f"nginx line {i}\n"
            delays.append(time.monotonic() - sent)
        # Unbuffered: each line is at the client long before a buffer would fill (16 kB) or
        # the stream's next keep-alive (2 s) would push it out.
        assert max(delays) < 1.0, delays
        listed = jobs_api.list_jobs(jpb.ListJobsRequest(namespace="team-a"), headers=bearer(operator))
        assert [j.job_id for j in listed.jobs] == [job.job_id]  # the sync pool answers meanwhile
        runner.finish(work, rpb.RESULT_EXITED, exit_code=0)
        follow.wait()
        assert follow.error is None
        assert watch.take(5).job.state == jpb.JOB_STATE_SUCCEEDED
