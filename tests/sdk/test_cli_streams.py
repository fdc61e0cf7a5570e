"""cpctl's streaming job commands as a subprocess against gunicorn's gthread pool, a runner
(the generated runner client) driving the job: `jobs ls -w`, `jobs logs [-f]`, `jobs run --wait`."""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from containers.runtime.v1 import runner_pb2 as rpb
from controlplane.auth import Role
from tests.workloads.test_streams_interop import _readline

from .test_cli import CPCTL

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def env(stream_server, namespace, make_key, tmp_path):
    base = {k: v for k, v in os.environ.items() if not k.startswith("CP_")}
    return {
        **base,
        "CP_BASE_URL": stream_server.url,
        "CP_API_KEY": make_key("team-a", Role.OPERATOR),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }


def start(env, *args) -> subprocess.Popen:
    return subprocess.Popen([CPCTL, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_run_wait_watch_and_follow(env, runner):
    watch = start(env, "jobs", "ls", "-w", "--json")
    waiting = start(env, "jobs", "run", "--wait", "--json", "busybox", "--", "sh", "-c", "exit 3")
    try:
        added = json.loads(_readline(watch.stdout, 20))
        assert (added["type"], added["job"]["state"]) == ("ADDED", "JOB_STATE_QUEUED")
        job_id = added["job"]["jobId"]
        work = runner.acquire()
        assert work.work_id == job_id and list(work.command) == ["sh", "-c", "exit 3"]
        follow = start(env, "jobs", "logs", "-f", job_id)
        offset = runner.append(work, 0, b"first\n")
        time.sleep(0.3)
        runner.append(work, offset, b"second\n")
        runner.finish(work, rpb.RESULT_EXITED, exit_code=3)

        out, err = waiting.communicate(timeout=30)
        assert waiting.returncode == 3, (out, err)  # the job's exit code
        final = json.loads(out)
        assert (final["jobId"], final["state"], final["exitCode"]) == (job_id, "JOB_STATE_FAILED", 3)
        assert final["reason"] == "exited with code 3"
        out, err = follow.communicate(timeout=30)
        assert (follow.returncode, out) == (0, "first\nsecond\n"), err
        logs = subprocess.run([CPCTL, "jobs", "logs", job_id], env=env, capture_output=True, text=True, timeout=30)
        assert logs.stdout == "first\nsecond\n"
        states = [json.loads(_readline(watch.stdout, 20))["job"]["state"] for _ in range(2)]
        assert states == ["JOB_STATE_RUNNING", "JOB_STATE_FAILED"]
    finally:
        for process in (watch, waiting):
            process.kill()
            process.communicate()
