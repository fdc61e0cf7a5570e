"""A test double of the control plane's runner API: RunnerServiceSync in memory.

Served by connectrpc's generated WSGI application on a real loopback HTTP server (a thread),
so the runner under test speaks real Connect over real sockets. It keeps the protocol's
rules that the runner depends on: one lease token per acquisition (failed_precondition for
any other), AppendLogs idempotent by offset (a gap is invalid_argument), FinishWork repeatable.
"""

from __future__ import annotations

import socketserver
import threading
import time
import uuid
from dataclasses import dataclass, field
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from connectrpc.code import Code
from connectrpc.errors import ConnectError
from cpsdk._gen.containers.runtime.v1 import runner_pb2 as pb
from cpsdk._gen.containers.runtime.v1.runner_connect import RunnerServiceWSGIApplication
from google.protobuf import duration_pb2, timestamp_pb2

from tests.runner.support import IMAGE
from tests.support.live import free_port

KEY = "cpk_runner-test-key"  # the fake checks it: a runner that sends no key is refused


@dataclass
class Lease:
    work: pb.Work
    token: str
    logs: bytearray = field(default_factory=bytearray)
    appends: list[tuple[int, int]] = field(default_factory=list)  # (offset, length) of every call
    heartbeats: int = 0
    running: bool = False
    cancel: bool = False
    grace: int = 1
    finished: pb.FinishWorkRequest | None = None


class _ThreadingServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass


class FakeControlPlane:
    heartbeat_interval = 0.5

    def __init__(self):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.cond = threading.Condition()
        self.queue: list[pb.Work] = []
        self.leases: dict[str, Lease] = {}
        self.prior_logs: dict[str, bytes] = {}
        self.fail_appends = 0  # store the next N chunks, then answer unavailable (a lost answer)
        self.acquires = 0
        self._server = None

    # -- serving --------------------------------------------------------------------------

    def start(self) -> None:
        app = RunnerServiceWSGIApplication(self)
        self._server = make_server("127.0.0.1", self.port, app, _ThreadingServer, _QuietHandler)
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()

    def stop(self) -> None:
        """Down as a restarting control plane is: connections refused until start()."""
        self._server.shutdown()
        self._server.server_close()

    # -- the test's side ------------------------------------------------------------------

    def add(self, kind=pb.WORK_KIND_JOB, command=(), *, image=IMAGE, prior_logs: bytes = b"", **fields) -> str:
        """Queues work; `prior_logs`: output an earlier attempt stored (this one continues after it)."""
        prefix = {pb.WORK_KIND_JOB: "job", pb.WORK_KIND_SANDBOX: "sbx", pb.WORK_KIND_BUILD: "env"}[kind]
        work = pb.Work(
            kind=kind,
            work_id=f"{prefix}_{uuid.uuid4().hex[:12]}",
            namespace="team-a",
            attempt=1,
            image=image,
            command=list(command),
            heartbeat_interval=duration_pb2.Duration(nanos=int(self.heartbeat_interval * 1e9)),
            log_offset=len(prior_logs),
            **fields,
        )
        with self.cond:
            self.prior_logs[work.work_id] = prior_logs
            self.queue.append(work)
            self.cond.notify_all()
        return work.work_id

    def lease(self, work_id: str) -> Lease:
        with self.cond:
            return self.leases[work_id]

    def wait_for(self, predicate, timeout: float = 20.0):
        """Waits until predicate() (called under the lock) is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while not (value := predicate()):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"timed out after {timeout} s waiting for {predicate}")
                self.cond.wait(remaining)
            return value

    def wait_running(self, work_id: str, timeout: float = 20.0) -> Lease:
        return self.wait_for(lambda: work_id in self.leases and self.leases[work_id].running and self.leases[work_id])

    def wait_finished(self, work_id: str, timeout: float = 30.0) -> pb.FinishWorkRequest:
        return self.wait_for(lambda: work_id in self.leases and self.leases[work_id].finished, timeout)

    def cancel(self, work_id: str, grace: int = 1) -> None:
        with self.cond:
            self.leases[work_id].cancel = True
            self.leases[work_id].grace = grace

    def revoke(self, work_id: str) -> None:
        """The lease expired and went elsewhere: every later call with it is refused."""
        with self.cond:
            self.leases[work_id].token = "given-to-another-runner"

    # -- RunnerServiceSync ----------------------------------------------------------------

    def _authenticate(self, ctx) -> None:
        if ctx.request_headers.get("authorization") != f"Bearer {KEY}":
            raise ConnectError(Code.UNAUTHENTICATED, "a runner key is required")

    def _lease(self, work_id: str, token: str) -> Lease:
        lease = self.leases.get(work_id)
        if lease is None or lease.token != token:
            raise ConnectError(Code.FAILED_PRECONDITION, f"the lease on {work_id} is not held")
        return lease

    def acquire_work(self, request, ctx):
        self._authenticate(ctx)
        deadline = time.monotonic() + request.wait_seconds
        with self.cond:
            self.acquires += 1
            while True:
                for work in self.queue:
                    if not request.kinds or work.kind in request.kinds:
                        self.queue.remove(work)
                        token = uuid.uuid4().hex
                        work.lease_token = token
                        work.lease_expire_time.CopyFrom(timestamp_pb2.Timestamp(seconds=int(time.time()) + 40))
                        self.leases[work.work_id] = Lease(
                            work=work, token=token, logs=bytearray(self.prior_logs[work.work_id])
                        )
                        self.cond.notify_all()
                        return pb.AcquireWorkResponse(work=work)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return pb.AcquireWorkResponse(retry_after=duration_pb2.Duration())
                self.cond.wait(remaining)

    def heartbeat(self, request, ctx):
        self._authenticate(ctx)
        with self.cond:
            lease = self._lease(request.work_id, request.lease_token)
            lease.heartbeats += 1
            lease.running = lease.running or request.running
            self.cond.notify_all()
            return pb.HeartbeatResponse(
                lease_expire_time=timestamp_pb2.Timestamp(seconds=int(time.time()) + 40),
                cancel_requested=lease.cancel,
                grace_seconds=lease.grace,
            )

    def append_logs(self, request, ctx):
        self._authenticate(ctx)
        with self.cond:
            lease = self._lease(request.work_id, request.lease_token)
            lease.appends.append((request.offset, len(request.data)))
            end = len(lease.logs)
            if request.offset > end:
                raise ConnectError(Code.INVALID_ARGUMENT, f"offset {request.offset} leaves a gap after {end}")
            lease.logs += request.data[end - request.offset :]
            self.cond.notify_all()
            if self.fail_appends:
                self.fail_appends -= 1
                raise ConnectError(Code.UNAVAILABLE, "stored, but the answer is lost")
            return pb.AppendLogsResponse(next_offset=len(lease.logs))

    def finish_work(self, request, ctx):
        self._authenticate(ctx)
        with self.cond:
            lease = self._lease(request.work_id, request.lease_token)
            if lease.finished is not None and lease.finished != request:
                raise ConnectError(Code.FAILED_PRECONDITION, "finished already, with another outcome")
            lease.finished = request
            self.cond.notify_all()
            return pb.FinishWorkResponse()
