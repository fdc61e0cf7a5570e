"""A real gunicorn for runner tests, and the generated connectrpc client as the runner."""

from __future__ import annotations

import pytest
from connectrpc.errors import ConnectError
from django.db import connection

from containers.runtime.v1 import runner_pb2 as pb
from containers.runtime.v1.runner_connect import RunnerServiceClientSync
from controlplane.auth import Principal
from runners.services import issue_runner
from tests.support.capabilities import CAPABILITY_SETTINGS
from tests.support.live import ServiceProcess, test_database_url

SYSTEM = Principal.system("tests")
# Short leases, so that expiry is seen within a test.
# A long safety-net recheck, so that a prompt wake-up can only be NOTIFY's.
LEASE_SETTINGS = {
    "RUNNER_HEARTBEAT_SECONDS": "1",
    "RUNNER_LEASE_TTL_SECONDS": "2",
    "JOBS_MAX_ATTEMPTS": "2",
    "RUNNER_RECHECK_SECONDS": "60",
}


SERVER_APPLICATION_NAME = "runner-tests-server"  # its connections in pg_stat_activity (not its listeners')


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker):
    env = {**CAPABILITY_SETTINGS, **LEASE_SETTINGS}
    if connection.vendor == "postgresql":
        env["DATABASE_URL"] = f"{test_database_url()}?application_name={SERVER_APPLICATION_NAME}"
    service = ServiceProcess(env=env, workers=2).start()
    yield service
    service.stop()


class Runner:
    """The runner side of the contract, over HTTP with the generated client."""

    def __init__(self, url: str, key: str):
        self.client = RunnerServiceClientSync(url, timeout_ms=30_000)
        self.headers = {"Authorization": f"Bearer {key}"}
        self.key = key

    def acquire(self, *kinds, wait: int = 0) -> pb.Work | None:
        reply = self.acquire_reply(*kinds, wait=wait)
        return reply.work if reply.HasField("work") else None

    def acquire_reply(self, *kinds, wait: int = 0, timeout_ms: int | None = None) -> pb.AcquireWorkResponse:
        request = pb.AcquireWorkRequest(kinds=kinds, wait_seconds=wait, runner_version="tests")
        return self.client.acquire_work(request, headers=self.headers, timeout_ms=timeout_ms)

    def heartbeat(self, work: pb.Work, running: bool = False) -> pb.HeartbeatResponse:
        request = pb.HeartbeatRequest(work_id=work.work_id, lease_token=work.lease_token, running=running)
        return self.client.heartbeat(request, headers=self.headers)

    def append(self, work: pb.Work, offset: int, data: bytes) -> int:
        request = pb.AppendLogsRequest(work_id=work.work_id, lease_token=work.lease_token, offset=offset, data=data)
        return self.client.append_logs(request, headers=self.headers).next_offset

    def finish(self, work: pb.Work, result, **fields) -> None:
        request = pb.FinishWorkRequest(work_id=work.work_id, lease_token=work.lease_token, result=result, **fields)
        self.client.finish_work(request, headers=self.headers)


@pytest.fixture
def make_runner(server, transactional_db):
    def make(*namespaces: str, name: str = "runner") -> Runner:
        runner, plaintext = issue_runner(actor=SYSTEM, name=name, namespaces=namespaces)
        made = Runner(server.url, plaintext)
        made.record = runner
        return made

    return make


def code_of(call) -> str:
    try:
        call()
    except ConnectError as exc:
        return exc.code.value
    return "ok"
