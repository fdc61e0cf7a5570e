"""WatchJobs and FollowJobLogs consumed by stock clients, unmodified: @connectrpc/connect-node
(its default transport) and `buf curl`, over Connect and gRPC-Web, against gunicorn's gthread
pool. A runner (the generated runner client) drives a job through its states meanwhile."""

from __future__ import annotations

import json
import subprocess
import threading

import pytest

from containers.api.v1 import job_pb2 as jpb
from containers.runtime.v1 import runner_pb2 as rpb
from controlplane.auth import Role
from tests.conftest import ROOT
from tests.controlplane.rpc.test_interop_node import generated_es  # noqa: F401 - the protoc-gen-es fixture

from .conftest import bearer

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

JOBS = "containers.api.v1.JobService"
VARIANTS = [
    pytest.param("connect", False, id="connect-json"),
    pytest.param("connect", True, id="connect-binary"),
    pytest.param("grpcweb", True, id="grpcweb-binary"),
    pytest.param("grpcweb", False, id="grpcweb-json"),
]


class NodeStream:
    """tests/support/node/stream_driver.mjs in a subprocess; its JSON lines read as they come."""

    def __init__(self, generated, url: str, protocol: str, binary: bool, method: str, request: dict, token: str, **kw):
        plan = {
            "baseUrl": url,
            "gen": str(generated),
            "protocol": protocol,
            "binary": binary,
            "procedure": f"{JOBS}/{method}",
            "request": request,
            "token": token,
            **kw,
        }
        self.process = subprocess.Popen(
            ["node", str(ROOT / "tests" / "support" / "node" / "stream_driver.mjs")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        )  # fmt: skip
        self.process.stdin.write(json.dumps(plan))
        self.process.stdin.close()

    def next(self, timeout: float = 20.0) -> dict:
        line = _readline(self.process.stdout, timeout)
        assert line, f"the driver ended: {self.process.stderr.read()}"
        return json.loads(line)

    def until(self, predicate, timeout: float = 20.0) -> list[dict]:
        lines = []
        while True:
            lines.append(self.next(timeout))
            if predicate(lines[-1]):
                return lines

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)
        for pipe in (self.process.stdout, self.process.stderr):
            pipe.close()


def _readline(pipe, timeout: float) -> str:
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(pipe.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    assert got, f"no line within {timeout} s"
    return got[0]


def is_bookmark(line: dict) -> bool:
    return line.get("message", {}).get("type") == "WATCH_EVENT_TYPE_BOOKMARK"


def states(lines: list[dict]) -> list[tuple[str, str]]:
    return [
        (line["message"]["job"]["jobId"], line["message"]["job"]["state"])
        for line in lines
        if "message" in line and not is_bookmark(line)
    ]


def ended_as(job_id: str, state: str):
    return lambda line: (
        "message" in line
        and line["message"].get("job", {}).get("jobId") == job_id
        and (line["message"]["job"]["state"] == state)
    )


@pytest.mark.parametrize(("protocol", "binary"), VARIANTS)
def test_connect_node_watches_every_state_and_follows_every_line(
    generated_es,  # noqa: F811
    stream_server,
    jobs_api,
    runner,
    namespace,
    make_key,
    protocol,
    binary,
):
    operator, viewer = make_key("team-a", Role.OPERATOR), make_key("team-a", Role.VIEWER)
    open_stream = _opener(generated_es, stream_server.url, protocol, binary, viewer)
    watch = open_stream("WatchJobs", {"namespace": "team-a"})
    bookmark = watch.until(is_bookmark)[-1]["message"]["resumeToken"]
    # Dropped after its second change; resumed from the last token it saw.
    dropped = open_stream("WatchJobs", {"namespace": "team-a", "resumeToken": bookmark}, stopAfter=2)
    try:
        job = jobs_api.run_job(jpb.RunJobRequest(namespace="team-a", image="busybox"), headers=bearer(operator)).job
        work = runner.acquire()
        follow = open_stream("FollowJobLogs", {"jobId": job.job_id})
        lines = [f"{protocol} line {i}\n".encode() for i in range(30)]
        offset = 0
        for line in lines:
            offset = runner.append(work, offset, line)
        runner.finish(work, rpb.RESULT_EXITED, exit_code=0)

        expected = [
            (job.job_id, "JOB_STATE_QUEUED"),
            (job.job_id, "JOB_STATE_RUNNING"),
            (job.job_id, "JOB_STATE_SUCCEEDED"),
        ]
        assert states(watch.until(ended_as(job.job_id, "JOB_STATE_SUCCEEDED"))) == expected
        logs = follow.until(lambda line: "message" not in line)
        assert logs[-1] == {"end": True}
        text = "".join(line["message"].get("data", "") for line in logs[:-1])
        assert text == b"".join(lines).decode()  # every line, once, in order
        assert logs[-2]["message"]["complete"] is True

        first_part = dropped.until(lambda line: "left" in line)
        token = first_part[-2]["message"]["resumeToken"]
        resumed = open_stream("WatchJobs", {"namespace": "team-a", "resumeToken": token})
        rest = resumed.until(ended_as(job.job_id, "JOB_STATE_SUCCEEDED"))
        assert states(first_part) + states(rest) == expected  # nothing lost or repeated
        resumed.close()
        follow.close()
    finally:
        watch.close()
        dropped.close()


def _opener(generated, url, protocol, binary, token):
    return lambda method, request, **kw: NodeStream(generated, url, protocol, binary, method, request, token, **kw)


@pytest.mark.parametrize("protocol", ["connect", "grpcweb"])
def test_buf_curl_watches_and_follows(stream_server, jobs_api, runner, namespace, make_key, protocol):
    operator, viewer = make_key("team-a", Role.OPERATOR), make_key("team-a", Role.VIEWER)
    job = jobs_api.run_job(jpb.RunJobRequest(namespace="team-a", image="busybox"), headers=bearer(operator)).job

    def curl(method: str, body: dict) -> subprocess.Popen:
        return subprocess.Popen(
            [str(ROOT / "node_modules" / ".bin" / "buf"), "curl", "--schema", str(ROOT / "proto"),
             "--protocol", protocol, "-H", f"Authorization: Bearer {viewer}", "-d", json.dumps(body),
             f"{stream_server.url}/{JOBS}/{method}"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        )  # fmt: skip

    # The watch runs until the stream's maximum lifetime (12 s here), then ends cleanly.
    watch = curl("WatchJobs", {"namespace": "team-a"})
    head = ""
    while "WATCH_EVENT_TYPE_BOOKMARK" not in head:  # the initial state is in: now change it
        head += _readline(watch.stdout, 20)
    work = runner.acquire()
    follow = curl("FollowJobLogs", {"jobId": job.job_id})
    offset = 0
    for i in range(10):
        offset = runner.append(work, offset, f"curl line {i}\n".encode())
    runner.finish(work, rpb.RESULT_EXITED, exit_code=0)
    out, err = follow.communicate(timeout=30)
    assert follow.returncode == 0, err
    messages = _json_values(out)
    assert "".join(m.get("data", "") for m in messages) == "".join(f"curl line {i}\n" for i in range(10))
    assert messages[-1]["complete"] is True
    out = watch.stdout.read()  # to the end (the pipe's buffer holds part of it already)
    assert watch.wait(30) == 0, watch.stderr.read()  # a clean end at STREAM_MAX_SECONDS
    watch.stdout.close()
    watch.stderr.close()
    events = [m for m in _json_values(head + out) if m["type"] != "WATCH_EVENT_TYPE_BOOKMARK"]
    assert [(e["type"], e["job"]["jobId"], e["job"]["state"]) for e in events] == [
        ("WATCH_EVENT_TYPE_ADDED", job.job_id, "JOB_STATE_QUEUED"),
        ("WATCH_EVENT_TYPE_MODIFIED", job.job_id, "JOB_STATE_RUNNING"),
        ("WATCH_EVENT_TYPE_MODIFIED", job.job_id, "JOB_STATE_SUCCEEDED"),
    ]


def _json_values(text: str) -> list[dict]:
    decoder, values, at = json.JSONDecoder(), [], 0
    while (at := _skip_space(text, at)) < len(text):
        value, at = decoder.raw_decode(text, at)
        values.append(value)
    return values


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at].isspace():
        at += 1
    return at
