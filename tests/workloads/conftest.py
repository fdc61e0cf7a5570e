"""A real gunicorn in the recommended streaming set-up (gthread), the generated JobService
client as the user, and the generated runner client as the runner that drives the jobs."""

from __future__ import annotations

import queue
import threading

import pytest
from connectrpc.errors import ConnectError

from containers.api.v1 import job_pb2 as jpb
from containers.api.v1.job_connect import JobServiceClientSync
from runners.services import issue_runner
from tests.runners.conftest import LEASE_SETTINGS, SYSTEM, Runner
from tests.support.live import ServiceProcess

# Short intervals, so that a test sees bookmarks, rechecks and a stream's end within seconds.
STREAM_SETTINGS = {
    "STREAM_BOOKMARK_SECONDS": "2",
    "STREAM_AUTH_RECHECK_SECONDS": "1",
    "STREAM_MAX_SECONDS": "12",
    "STREAM_POLL_SECONDS": "0.2",
}
# The recommended streaming pool (deploy/gunicorn-streams.conf.py), one process.
GTHREAD = ("--worker-class", "gthread", "--threads", "128")


@pytest.fixture(scope="module")
def stream_server(django_db_setup, django_db_blocker):
    service = ServiceProcess(env={**LEASE_SETTINGS, **STREAM_SETTINGS}, workers=1, args=GTHREAD).start()
    yield service
    service.stop()


@pytest.fixture
def jobs_api(stream_server, transactional_db):
    return JobServiceClientSync(stream_server.url, timeout_ms=60_000)


@pytest.fixture
def runner(stream_server, transactional_db) -> Runner:
    _, plaintext = issue_runner(actor=SYSTEM, name="stream test runner", namespaces=())
    return Runner(stream_server.url, plaintext)


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


class Collector:
    """Reads a server stream in a thread; the test takes its messages as they come."""

    def __init__(self, stream, stop_after=None):
        self.messages: queue.Queue = queue.Queue()
        self.error: ConnectError | None = None
        self.ended = threading.Event()
        self._stream = stream
        self._stop_after = stop_after
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self):
        try:
            for message in self._stream:
                self.messages.put(message)
                if self._stop_after is not None and self._stop_after(message):
                    break
        except ConnectError as exc:
            self.error = exc
        finally:
            close = getattr(self._stream, "close", None)
            if close is not None:
                close()
            self.ended.set()

    def take(self, timeout: float = 10.0):
        return self.messages.get(timeout=timeout)

    def take_until(self, predicate, timeout: float = 15.0) -> list:
        taken = []
        while True:
            taken.append(self.take(timeout))
            if predicate(taken[-1]):
                return taken

    def wait(self, timeout: float = 20.0) -> None:
        assert self.ended.wait(timeout), "the stream did not end"


def changes(messages) -> list[tuple[str, int]]:
    """(job id, state) of each ADDED/MODIFIED event, bookmarks left out."""
    return [(m.job.job_id, m.job.state) for m in messages if m.type != jpb.WATCH_EVENT_TYPE_BOOKMARK]
