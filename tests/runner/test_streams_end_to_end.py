"""A real podman job, followed live by stock clients: unmodified @connectrpc/connect-node (its
default transport) watches the namespace's jobs and `buf curl` follows the job's output, against
gunicorn's recommended streaming pool (gthread), while a real `cprunner --engine podman` runs it.

They must see every state of the job in order, and every line of its output once.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from django.db import connection

from controlplane.auth import Role
from tests.conftest import ROOT
from tests.controlplane.rpc.test_interop_node import generated_es  # noqa: F401 - the protoc-gen-es fixture
from tests.runner.test_end_to_end import SERVER_SETTINGS, SYSTEM, Api
from tests.support import live
from tests.workloads.conftest import GTHREAD, STREAM_SETTINGS
from tests.workloads.test_streams_interop import NodeStream, _json_values, ended_as, is_bookmark, states

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# Five lines, a little apart, so that the output arrives while the stream is open.
SCRIPT = "for i in 1 2 3 4 5; do echo podman line $i; sleep 0.3; done"
OUTPUT = "".join(f"podman line {i}\n" for i in range(1, 6))


@pytest.fixture(scope="module")
def stream_server(django_db_setup, django_db_blocker):
    env = {**SERVER_SETTINGS, **STREAM_SETTINGS, "STREAM_MAX_SECONDS": "60"}
    if connection.vendor == "postgresql":
        env["DATABASE_URL"] = live.test_database_url()
    service = live.ServiceProcess(env=env, workers=1, args=GTHREAD).start()
    yield service
    service.stop()


def test_a_podman_job_is_watched_by_connect_node_and_followed_by_buf_curl(
    generated_es,  # noqa: F811
    stream_server,
    namespace,
    make_key,
    podman_socket,
    start_runner,
    runner_name,
):
    from runners.services import issue_runner

    api = Api(stream_server.url, make_key("team-a", Role.OPERATOR))
    viewer = make_key("team-a", Role.VIEWER)
    key = issue_runner(actor=SYSTEM, name="streams e2e", namespaces=())[1]
    start_runner(
        stream_server.url, runner_name, "--engine", "podman", "--podman-socket", podman_socket, "--network", "host",
        key=key,
    )  # fmt: skip
    watch = NodeStream(generated_es, stream_server.url, "connect", False, "WatchJobs", {"namespace": "team-a"}, viewer)
    follow = None
    try:
        watch.until(is_bookmark)  # the initial state is in: every later event is a change
        job_id = api.run("sh", "-c", SCRIPT)
        follow = subprocess.Popen(
            [str(ROOT / "node_modules" / ".bin" / "buf"), "curl", "--schema", str(ROOT / "proto"),
             "--protocol", "connect", "-H", f"Authorization: Bearer {viewer}", "-d", json.dumps({"jobId": job_id}),
             f"{stream_server.url}/containers.api.v1.JobService/FollowJobLogs"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        )  # fmt: skip
        seen = watch.until(ended_as(job_id, "JOB_STATE_SUCCEEDED"), timeout=60)
        ours = [state for job, state in states(seen) if job == job_id]
        # Every state, in order: each change is one event (a state may repeat as its other fields
        # change, e.g. the start time), never out of order and never skipped.
        distinct = [state for i, state in enumerate(ours) if i == 0 or ours[i - 1] != state]
        assert distinct == ["JOB_STATE_QUEUED", "JOB_STATE_RUNNING", "JOB_STATE_SUCCEEDED"], ours

        out, err = follow.communicate(timeout=60)
        assert follow.returncode == 0, err
        messages = _json_values(out)
        assert "".join(m.get("data", "") for m in messages) == OUTPUT  # every line, once, in order
        assert messages[-1]["complete"] is True
        job = api.job(job_id)
        assert (job["state"], job.get("exitCode", 0), job["attempt"]) == ("JOB_STATE_SUCCEEDED", 0, 1)
        assert api.logs(job_id) == OUTPUT
    finally:
        watch.close()
        if follow is not None and follow.poll() is None:
            follow.kill()
            follow.communicate()
