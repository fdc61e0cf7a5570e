"""client.jobs.watch() and client.jobs.follow_logs(), sync and async, against gunicorn's
gthread pool; the watch survives a server restart (unavailable), resuming from its token."""

from __future__ import annotations

import asyncio
import queue
import threading
import time

import pytest
from cpsdk import AsyncClient, Client, RetryPolicy
from cpsdk._gen.containers.api.v1 import job_pb2

from containers.runtime.v1 import runner_pb2 as rpb
from controlplane.auth import Role
from runners.services import issue_runner
from tests.runners.conftest import LEASE_SETTINGS, SYSTEM, Runner
from tests.support.live import ServiceProcess
from tests.workloads.conftest import GTHREAD, STREAM_SETTINGS

pytestmark = pytest.mark.django_db(transaction=True)

QUEUED, RUNNING, SUCCEEDED = job_pb2.JOB_STATE_QUEUED, job_pb2.JOB_STATE_RUNNING, job_pb2.JOB_STATE_SUCCEEDED
PATIENT = RetryPolicy(attempts=40, initial_backoff=0.1, max_backoff=0.5)  # outlasts a restart


def server(port: int | None = None) -> ServiceProcess:
    # A restart cuts open streams after --graceful-timeout (clients resume with their tokens).
    args = (*GTHREAD, "--graceful-timeout", "1")
    return ServiceProcess(env={**LEASE_SETTINGS, **STREAM_SETTINGS}, workers=1, args=args, port=port).start()


def runner_for(url: str) -> Runner:
    return Runner(url, issue_runner(actor=SYSTEM, name="sdk stream runner", namespaces=())[1])


def test_watch_resumes_across_a_server_restart_and_follow_logs_reads_everything(namespace, make_key):
    live = server()
    key = make_key("team-a", Role.OPERATOR)
    try:
        client = Client(live.url, key, retry=PATIENT)
        events: queue.Queue = queue.Queue()
        stop = threading.Event()

        def consume():  # bookmarks (every 2 s) let it see `stop` while nothing changes
            for event in client.jobs.watch(bookmarks=True):
                if stop.is_set():
                    return
                if event.type != job_pb2.WATCH_EVENT_TYPE_BOOKMARK:
                    events.put(event)

        consumer = threading.Thread(target=consume, daemon=True)
        consumer.start()
        first = client.jobs.run("busybox")
        assert _next(events).job.job_id == first.job_id  # ADDED, then live

        live.stop()  # the stream breaks: unavailable while the server is down
        live = server(port=live.port)
        writer = Client(live.url, key)
        job = writer.jobs.run("busybox")
        runner = runner_for(live.url)
        work = runner.acquire()  # the oldest queued: the first job
        offset = 0
        for i in range(5):
            offset = runner.append(work, offset, f"sdk line {i}\n".encode())
        runner.finish(work, rpb.RESULT_EXITED, exit_code=0)
        seen = [(e.type, e.job.job_id, e.job.state) for e in (_next(events) for _ in range(3))]
        assert seen == [  # after the restart, from its token: nothing lost, nothing again
            (job_pb2.WATCH_EVENT_TYPE_ADDED, job.job_id, QUEUED),
            (job_pb2.WATCH_EVENT_TYPE_MODIFIED, first.job_id, RUNNING),
            (job_pb2.WATCH_EVENT_TYPE_MODIFIED, first.job_id, SUCCEEDED),
        ]
        assert events.empty()
        text = "".join(writer.jobs.follow_logs(first.job_id))
        assert text == "".join(f"sdk line {i}\n" for i in range(5))
        stop.set()
        consumer.join(10)
        assert not consumer.is_alive()
    finally:
        live.stop()


def _next(events: queue.Queue, timeout: float = 20.0):
    return events.get(timeout=timeout)


def test_async_watch_and_follow_logs(namespace, make_key):
    live = server()
    key = make_key("team-a", Role.OPERATOR)
    runner = runner_for(live.url)

    async def scenario():
        async with AsyncClient(live.url, key) as client:
            watch = client.jobs.watch(bookmarks=True)
            assert (await anext(watch)).type == job_pb2.WATCH_EVENT_TYPE_BOOKMARK  # no jobs yet
            job = await client.jobs.run("busybox")
            assert (await anext(watch)).job.state == QUEUED
            work = await asyncio.to_thread(runner.acquire)
            assert (await anext(watch)).job.state == RUNNING
            await asyncio.to_thread(runner.append, work, 0, b"async output\n")
            await asyncio.to_thread(runner.finish, work, rpb.RESULT_EXITED, exit_code=0)
            assert (await anext(watch)).job.state == SUCCEEDED
            await watch.aclose()
            return [piece async for piece in client.jobs.follow_logs(job.job_id)]

    try:
        started = time.monotonic()
        assert asyncio.run(scenario()) == ["async output\n"]
        assert time.monotonic() - started < 20
    finally:
        live.stop()
