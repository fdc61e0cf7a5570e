"""RunnerClient: the runner API (containers.runtime.v1.RunnerService), for runner keys.

Each method is one attempt: the runner decides what to retry and for how long (a lease is at
stake, so it retries `unavailable` far longer than the SDK's default policy would). Failures
raise the typed `cpsdk.errors.Error` of their code, as every SDK call does.
"""

from __future__ import annotations

import os

from connectrpc.errors import ConnectError

from . import errors
from ._gen.containers.runtime.v1 import runner_pb2
from ._transport import NO_RETRIES, SyncTransport
from .client import _SyncLifecycle

RUNNER = runner_pb2.DESCRIPTOR.services_by_name["RunnerService"]


class RunnerClient(_SyncLifecycle):
    """`RunnerClient(url, runner_key)`; CP_URL / CP_RUNNER_KEY fill gaps.

    `timeout` is per call; AcquireWork's long poll adds its own `wait_seconds` to it.
    """

    def __init__(self, base_url: str | None = None, runner_key: str | None = None, *, timeout: float = 30.0):
        base_url = base_url or os.environ.get("CP_URL", "")
        if not base_url:
            raise ValueError("base_url is required (or set CP_URL), e.g. http://127.0.0.1:8000")
        token = runner_key or os.environ.get("CP_RUNNER_KEY") or None
        self.timeout = timeout
        self._transport = SyncTransport(
            base_url, token, namespace=None, timeout=timeout, retry=NO_RETRIES, scoped=False
        )

    def _call(self, method: str, request, timeout: float | None = None):
        transport = self._transport
        stub = transport.stub(RUNNER, method)
        timeout_ms = int((timeout or self.timeout) * 1000)
        try:
            return stub(request, headers=transport.headers, timeout_ms=timeout_ms)
        except ConnectError as exc:
            raise errors.from_connect(exc) from None

    def acquire_work(
        self, kinds=(), *, wait_seconds: int = 20, runner_version: str = ""
    ) -> runner_pb2.AcquireWorkResponse:
        request = runner_pb2.AcquireWorkRequest(kinds=kinds, wait_seconds=wait_seconds, runner_version=runner_version)
        return self._call("AcquireWork", request, timeout=self.timeout + wait_seconds)

    def heartbeat(self, work_id: str, lease_token: str, *, running: bool = False) -> runner_pb2.HeartbeatResponse:
        return self._call(
            "Heartbeat", runner_pb2.HeartbeatRequest(work_id=work_id, lease_token=lease_token, running=running)
        )

    def append_logs(self, work_id: str, lease_token: str, offset: int, data: bytes) -> runner_pb2.AppendLogsResponse:
        request = runner_pb2.AppendLogsRequest(work_id=work_id, lease_token=lease_token, offset=offset, data=data)
        return self._call("AppendLogs", request)

    def finish_work(self, work_id: str, lease_token: str, result: int, **outcome) -> runner_pb2.FinishWorkResponse:
        """`outcome`: exit_code, signal, reason, image_digest (FinishWorkRequest's fields)."""
        request = runner_pb2.FinishWorkRequest(work_id=work_id, lease_token=lease_token, result=result, **outcome)
        return self._call("FinishWork", request)
