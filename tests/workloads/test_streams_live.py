"""WatchJobs and FollowJobLogs over HTTP against gunicorn's gthread pool, with the generated
connectrpc clients: every state in order, every log byte once, resume, authorization, a key
revoked mid-stream, the stream's lifetime, no connection held while idle, 50 at once."""

from __future__ import annotations

import statistics
import time

import pytest
from connectrpc.errors import ConnectError
from django.db import connection

from apikeys.services import revoke_api_key
from containers.api.v1 import job_pb2 as jpb
from containers.runtime.v1 import runner_pb2 as rpb
from controlplane import notify
from controlplane.auth import Role
from workloads.services import job_events

from .conftest import SYSTEM, Collector, bearer, changes

pytestmark = pytest.mark.django_db(transaction=True)

ADDED, MODIFIED, BOOKMARK = jpb.WATCH_EVENT_TYPE_ADDED, jpb.WATCH_EVENT_TYPE_MODIFIED, jpb.WATCH_EVENT_TYPE_BOOKMARK
QUEUED, RUNNING, SUCCEEDED, FAILED = (
    jpb.JOB_STATE_QUEUED,
    jpb.JOB_STATE_RUNNING,
    jpb.JOB_STATE_SUCCEEDED,
    jpb.JOB_STATE_FAILED,
)


def run_job(jobs_api, key, namespace: str = "team-a", **fields) -> jpb.Job:
    request = jpb.RunJobRequest(namespace=namespace, image="busybox", **fields)
    return jobs_api.run_job(request, headers=bearer(key)).job


def watch(jobs_api, key, token: str = "", namespace: str = "team-a", job_id: str = "", **kwargs) -> Collector:
    request = jpb.WatchJobsRequest(namespace=namespace, resume_token=token, job_id=job_id)
    return Collector(jobs_api.watch_jobs(request, headers=bearer(key)), **kwargs)


def is_bookmark(message) -> bool:
    return message.type == BOOKMARK


def test_watch_lists_then_streams_every_state_in_order(jobs_api, runner, namespace, make_key):
    operator = make_key("team-a", Role.OPERATOR)
    viewer = make_key("team-a", Role.VIEWER)
    existing = run_job(jobs_api, operator, env={"TOKEN": "s3cret"})
    watcher = watch(jobs_api, viewer)
    initial = watcher.take_until(is_bookmark)
    assert [(m.type, m.job.job_id) for m in initial[:-1]] == [(ADDED, existing.job_id)]
    assert initial[-1].resume_token and not initial[0].resume_token
    assert dict(initial[0].job.env) == {"TOKEN": ""}  # a viewer sees names, never values

    job = run_job(jobs_api, operator, env={"TOKEN": "s3cret"})
    runner.finish(runner.acquire(), rpb.RESULT_EXITED, exit_code=0)  # the existing one, first in the queue
    work = runner.acquire()
    runner.finish(work, rpb.RESULT_EXITED, exit_code=3)
    seen = watcher.take_until(lambda m: m.job.job_id == job.job_id and m.job.state == FAILED)
    assert changes(seen) == [
        (job.job_id, QUEUED),
        (existing.job_id, RUNNING),
        (existing.job_id, SUCCEEDED),
        (job.job_id, RUNNING),
        (job.job_id, FAILED),
    ]
    events = [m for m in seen if not is_bookmark(m)]
    assert [m.type for m in events] == [ADDED, MODIFIED, MODIFIED, MODIFIED, MODIFIED]
    tokens = [int(m.resume_token) for m in events]
    assert tokens == sorted(tokens) and len(set(tokens)) == len(tokens)
    assert events[-1].job.exit_code == 3 and events[-1].job.reason == "exited with code 3"
    assert all(dict(m.job.env) == {"TOKEN": ""} for m in events)

    # An operator sees the values; every event carries the whole job.
    as_operator = watch(jobs_api, operator, token=initial[-1].resume_token)
    first = as_operator.take()
    assert (first.type, first.job.job_id, dict(first.job.env)) == (ADDED, job.job_id, {"TOKEN": "s3cret"})


def test_resume_after_a_drop_loses_and_repeats_nothing(jobs_api, runner, namespace, make_key):
    operator = make_key("team-a", Role.OPERATOR)
    first = watch(jobs_api, operator, stop_after=lambda m: m.type == MODIFIED)  # drops after one change
    token = first.take_until(is_bookmark)[-1].resume_token
    jobs = [run_job(jobs_api, operator) for _ in range(3)]
    for _ in jobs:
        runner.finish(runner.acquire(), rpb.RESULT_EXITED, exit_code=0)
    first.wait()
    before = [m for m in _drain(first) if not is_bookmark(m)]
    assert before and before[-1].type == MODIFIED  # it stopped mid-way
    resumed = watch(jobs_api, operator, token=before[-1].resume_token)
    after = resumed.take_until(lambda m: (m.job.job_id, m.job.state) == (jobs[-1].job_id, SUCCEEDED))
    whole = changes(before) + changes(after)
    expected = [(j.job_id, QUEUED) for j in jobs]
    for j in jobs:
        expected += [(j.job_id, RUNNING), (j.job_id, SUCCEEDED)]
    assert whole == expected  # every change once, in order, across the drop

    # The same again from the very first token: the whole history since that bookmark.
    replay = watch(jobs_api, operator, token=token)
    assert changes(replay.take_until(lambda m: (m.job.job_id, m.job.state) == (jobs[-1].job_id, SUCCEEDED))) == expected


def test_a_watch_of_one_job_lists_and_streams_only_that_job(jobs_api, runner, namespace, other_namespace, make_key):
    operator = make_key("team-a", Role.OPERATOR)
    other = run_job(jobs_api, operator)
    job = run_job(jobs_api, operator)
    watcher = watch(jobs_api, operator, job_id=job.job_id)
    initial = watcher.take_until(is_bookmark)
    assert [(m.type, m.job.job_id) for m in initial[:-1]] == [(ADDED, job.job_id)]  # not `other`
    run_job(jobs_api, operator)  # a third: created after the bookmark, not this watch's either
    for _ in range(3):
        runner.finish(runner.acquire(), rpb.RESULT_EXITED, exit_code=0)  # other, job, the third
    seen = watcher.take_until(lambda m: m.job.state == SUCCEEDED)
    assert changes(seen) == [(job.job_id, RUNNING), (job.job_id, SUCCEEDED)]

    # Its tokens are the namespace's positions: a whole watch resumed from one goes on from there.
    everything = watch(jobs_api, operator, token=initial[-1].resume_token)
    rest = everything.take_until(lambda m: m.job.job_id != other.job_id and m.job.job_id != job.job_id
                                 and m.job.state == SUCCEEDED)  # fmt: skip
    assert (other.job_id, RUNNING) in changes(rest) and (job.job_id, SUCCEEDED) in changes(rest)

    # Another namespace's job, or none at all: not_found, not its events.
    outsider_job = run_job(jobs_api, make_key("team-b", Role.OPERATOR), namespace="team-b")
    for job_id in (outsider_job.job_id, "job_00000000000000000000"):
        refused = watch(jobs_api, operator, job_id=job_id)
        refused.wait()
        assert refused.error is not None and refused.error.code.value == "not_found", job_id
        assert refused.messages.empty()


def _drain(collector: Collector) -> list:
    out = []
    while not collector.messages.empty():
        out.append(collector.messages.get())
    return out


def test_an_expired_or_foreign_token_is_refused_clearly(jobs_api, namespace, make_key, settings):
    operator = make_key("team-a", Role.OPERATOR)
    run_job(jobs_api, operator)
    token = watch(jobs_api, operator).take_until(is_bookmark)[-1].resume_token
    run_job(jobs_api, operator)
    settings.JOBS_WATCH_RETENTION_SECONDS = 0
    assert job_events.trim() == 2  # the log is trimmed: the change after `token` is gone
    expired = watch(jobs_api, operator, token=token)
    expired.wait()
    assert expired.error.code.value == "out_of_range"
    assert "watch again without a resume token" in expired.error.message
    ahead = watch(jobs_api, operator, token="999999")
    ahead.wait()
    assert ahead.error.code.value == "invalid_argument" and "resumeToken" in ahead.error.message
    # Starting again without a token works: the current state, then changes.
    assert watch(jobs_api, operator).take_until(is_bookmark)[-1].resume_token == str(int(token) + 1)


def test_follow_logs_sends_every_byte_once_and_ends_with_the_job(jobs_api, runner, namespace, make_key):
    operator = make_key("team-a", Role.OPERATOR)
    job = run_job(jobs_api, operator)
    work = runner.acquire()
    lines = [f"line {i}\n".encode() for i in range(20)]
    offset = runner.append(work, 0, b"".join(lines[:5]))
    request = jpb.FollowJobLogsRequest(job_id=job.job_id)
    follower = Collector(jobs_api.follow_job_logs(request, headers=bearer(make_key("team-a", Role.VIEWER))))
    got = follower.take().data
    for line in lines[5:]:
        offset = runner.append(work, offset, line)
        time.sleep(0.02)
    runner.append(work, 0, lines[0])  # a retried chunk: stored (and sent) once
    runner.finish(work, rpb.RESULT_EXITED, exit_code=0)
    follower.wait()
    assert follower.error is None
    messages = [m for m in _drain(follower)]
    got += "".join(m.data for m in messages)
    assert got == b"".join(lines).decode()
    assert messages[-1].complete and messages[-1].next_offset == offset
    # From an offset: the rest only, and at once complete (the job has ended).
    tail = list(
        jobs_api.follow_job_logs(
            jpb.FollowJobLogsRequest(job_id=job.job_id, offset=offset - 8), headers=bearer(operator)
        )
    )
    assert [(m.data, m.complete) for m in tail] == [("line 19\n", True)]


@pytest.mark.parametrize("method", ["watch", "logs"])
def test_streams_are_authorized_like_the_reads(jobs_api, runner, namespace, other_namespace, make_key, method):
    job = run_job(jobs_api, make_key("team-a", Role.OPERATOR))
    outsider = make_key("team-b", Role.OPERATOR)

    def first_code(key, job_id=job.job_id):
        if method == "watch":
            stream = jobs_api.watch_jobs(jpb.WatchJobsRequest(namespace="team-a"), headers=bearer(key))
        else:
            stream = jobs_api.follow_job_logs(jpb.FollowJobLogsRequest(job_id=job_id), headers=bearer(key))
        try:
            next(iter(stream))
        except ConnectError as exc:
            return exc.code.value
        finally:
            stream.close()
        return "ok"

    assert first_code(make_key("team-a", Role.VIEWER)) == "ok"
    assert first_code(outsider) == "permission_denied"
    assert first_code(runner.key) == "permission_denied"
    assert first_code("cpk_not_a_real_key") == "unauthenticated"
    if method == "logs":
        assert first_code(make_key("team-a", Role.VIEWER), job_id="job_00000000000000000000") == "not_found"


def test_a_key_revoked_mid_stream_ends_it_unauthenticated(jobs_api, namespace, make_key):
    key = make_key("team-a", Role.VIEWER)
    watcher = watch(jobs_api, key)
    watcher.take_until(is_bookmark)
    revoked_at = time.monotonic()
    revoke_api_key(actor=SYSTEM, key_id=_key_id(key))
    watcher.wait(10)
    assert watcher.error is not None and watcher.error.code.value == "unauthenticated"
    assert "revoked" in watcher.error.message
    assert time.monotonic() - revoked_at < 5  # STREAM_AUTH_RECHECK_SECONDS=1, plus the key cache


def _key_id(plaintext: str) -> str:
    from apikeys import tokens
    from apikeys.models import ApiKey

    return ApiKey.objects.get(digest=tokens.digest(plaintext)).key_id


def test_a_stream_ends_cleanly_at_its_maximum_lifetime(jobs_api, namespace, make_key):
    key = make_key("team-a", Role.VIEWER)
    started = time.monotonic()
    watcher = watch(jobs_api, key)
    watcher.wait(30)
    lasted = time.monotonic() - started
    messages = _drain(watcher)
    assert watcher.error is None  # a clean end (OK): the client resumes with its last token
    assert 11 <= lasted < 20  # STREAM_MAX_SECONDS=12
    assert all(is_bookmark(m) for m in messages) and len(messages) >= 4  # keep-alives every 2 s


def server_connections() -> set[int]:
    """Connections to the test database but this one and the listeners (by backend pid)."""
    if connection.vendor != "postgresql":
        return set()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            " AND application_name NOT LIKE %s",
            [notify.APPLICATION_NAME + "%"],
        )
        return {pid for (pid,) in cursor.fetchall()}


def test_fifty_idle_watches_hold_no_connection_and_unary_calls_stay_fast(jobs_api, runner, namespace, make_key):
    key = make_key("team-a", Role.OPERATOR)

    def unary_latencies(n=20) -> list[float]:
        took = []
        for _ in range(n):
            started = time.monotonic()
            jobs_api.list_jobs(jpb.ListJobsRequest(namespace="team-a", page_size=10), headers=bearer(key))
            took.append(time.monotonic() - started)
        return took

    baseline = statistics.median(unary_latencies())
    before = server_connections()  # this test process's own, and none of the server's
    watchers = [watch(jobs_api, key) for _ in range(50)]
    tokens = [w.take_until(is_bookmark)[-1].resume_token for w in watchers]
    assert len(set(tokens)) == 1
    # Idle, the 50 streams hold no connection (each looks now and then, briefly: its
    # keep-alive every STREAM_BOOKMARK_SECONDS, so some instant has none open).
    deadline = time.monotonic() + 3
    while (held := server_connections() - before) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not held
    loaded = statistics.median(unary_latencies())
    assert loaded < max(5 * baseline, baseline + 0.05)  # answered within their usual latency
    job = run_job(jobs_api, key)
    for w in watchers:  # and every watch sees the change
        assert changes([w.take()]) == [(job.job_id, QUEUED)]
