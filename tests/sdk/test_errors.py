"""Typed errors with their details, namespace and role refusals, timeouts, retries, async."""

from __future__ import annotations

import asyncio
import gzip
import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from cpsdk import AdminClient, AsyncAdminClient, AsyncClient, Client, RetryPolicy, Role, errors
from cpsdk._gen.containers.api.v1 import job_pb2
from cpsdk._transport import prepare
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from controlplane.auth import Role as ServerRole
from tests.conftest import SYSTEM
from workloads.services.jobs import run_job

pytestmark = pytest.mark.e2e


@pytest.fixture
def keys(sdk_service, transactional_db, namespace, other_namespace, make_key):
    return {role: make_key("team-a", role) for role in ServerRole} | {"team-b": make_key("team-b", ServerRole.OPERATOR)}


def test_namespace_scoped_client_is_refused_in_another_namespace(sdk_service, keys):
    foreign = run_job(actor=SYSTEM, namespace="team-b", image="busybox:1.36", command=["true"], env={})
    with Client(sdk_service.url, keys[ServerRole.OPERATOR]) as client:
        with pytest.raises(errors.PermissionDenied) as refused:
            client.jobs.get(foreign.job_id)
        # Refused by id: the message does not name the resource's owner.
        assert "team-b" not in refused.value.message
        with pytest.raises(errors.PermissionDenied):
            client.jobs.cancel(foreign.job_id)
    # Naming the other namespace explicitly does not help either.
    client = Client(sdk_service.url, keys[ServerRole.OPERATOR], namespace="team-b")
    with pytest.raises(errors.PermissionDenied, match="no role in namespace 'team-b'"):
        list(client.jobs.list())


def test_viewer_is_refused_a_mutation(sdk_service, keys):
    with Client(sdk_service.url, keys[ServerRole.VIEWER]) as viewer:
        assert list(viewer.jobs.list()) == []
        with pytest.raises(errors.PermissionDenied, match="ROLE_OPERATOR or above is required") as refused:
            viewer.jobs.run("busybox:1.36", command=["true"])
        assert refused.value.code == "permission_denied"
        with pytest.raises(errors.PermissionDenied):
            viewer.workspaces.create("w")


def test_typed_errors_carry_decoded_details(sdk_service, keys):
    admin = AdminClient(sdk_service.url, keys[ServerRole.ADMIN])
    with pytest.raises(errors.InvalidArgument) as bad:
        admin.create_namespace("Bad_Name")
    assert bad.value.message.startswith("namespace")
    assert [v.field for v in bad.value.field_violations] == ["namespace"]

    admin.update_namespace("team-a", quotas={"max_workspaces": 1})
    with Client(sdk_service.url, keys[ServerRole.OPERATOR]) as client:
        client.workspaces.create("one")
        with pytest.raises(errors.ResourceExhausted) as full:
            client.workspaces.create("two")
        assert [v.subject for v in full.value.quota_violations] == ["namespace:team-a/maxWorkspaces"]

        with pytest.raises(errors.InvalidArgument) as too_many:
            list(client.uploads.list(metadata={f"k{n}": "v" for n in range(17)}))
        (violation,) = too_many.value.field_violations
        assert violation.field == "metadataFilters" and "16" in violation.description

        with pytest.raises(errors.NotFound):
            client.jobs.get("job_doesnotexist0000000")
    with pytest.raises(errors.Unauthenticated, match="credential is required"):
        Client(sdk_service.url, namespace="team-a").whoami()
    with pytest.raises(errors.Unauthenticated):
        Client(sdk_service.url, "cpk_" + "x" * 36).whoami()
    # Every Connect code has its class, all under errors.Error.
    assert len(errors.BY_CODE) == 16 and all(issubclass(c, errors.Error) for c in errors.BY_CODE.values())


class Unavailable(BaseHTTPRequestHandler):
    """An HTTP server that is up but answers every call `unavailable`, keeping what it saw."""

    seen: list[tuple[str, dict]] = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.seen.append((self.path, dict(self.headers.items()), body))
        payload = json.dumps({"code": "unavailable", "message": "down for maintenance"}).encode()
        self.send_response(503)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def unavailable_server():
    Unavailable.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Unavailable)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", Unavailable.seen
    server.shutdown()
    server.server_close()


def test_retries_only_safe_calls_and_sends_the_timeout(unavailable_server):
    url, seen = unavailable_server
    retry = RetryPolicy(attempts=3, initial_backoff=0.01, max_backoff=0.02)
    client = Client(url, "cpk_x", namespace="team-a", timeout=2.5, retry=retry)
    with pytest.raises(errors.Unavailable, match="down for maintenance"):
        client.jobs.get("job_1")
    assert [path for path, _, _ in seen] == ["/containers.api.v1.JobService/GetJob"] * 3
    assert {headers["connect-timeout-ms"] for _, headers, _ in seen} == {"2500"}
    assert {headers["authorization"] for _, headers, _ in seen} == {"Bearer cpk_x"}

    seen.clear()
    with pytest.raises(errors.Unavailable):
        client.whoami()  # declared NO_SIDE_EFFECTS in identity.proto
    assert len(seen) == 3

    # Side effects: sent once, unless the request carries an AIP-155 request_id (added to
    # creating methods separately): then every attempt repeats the same id.
    for call, request_class in (
        (lambda: client.jobs.run("busybox:1.36", command=["true"]), job_pb2.RunJobRequest),
        (lambda: client.jobs.cancel("job_1"), job_pb2.CancelJobRequest),
    ):
        seen.clear()
        with pytest.raises(errors.Unavailable):
            call()
        if "request_id" not in request_class.DESCRIPTOR.fields_by_name:
            assert len(seen) == 1, request_class
            continue
        assert len(seen) == 3, request_class
        sent = [request_class.FromString(gzip.decompress(body)) for _, _, body in seen]
        assert len({r.request_id for r in sent}) == 1 and uuid.UUID(sent[0].request_id)


def test_request_id_makes_a_creating_call_retryable():
    """AIP-155: a request message with `request_id` gets a fresh UUID when empty, and may then
    be retried (the server deduplicates on it). Detected from the descriptor alone."""
    file = descriptor_pb2.FileDescriptorProto(name="sdk_test/request_id.proto", package="sdktest", syntax="proto3")
    message = file.message_type.add(name="CreateThingRequest")
    message.field.add(name="name", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING)
    message.field.add(name="request_id", number=2, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING)
    plain = file.message_type.add(name="CreateOtherRequest")
    plain.field.add(name="name", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("sdktest.CreateThingRequest"))
    run_job_method = job_pb2.DESCRIPTOR.services_by_name["JobService"].methods_by_name["RunJob"]

    request = cls(name="x")
    assert prepare(run_job_method, request) is True
    assert uuid.UUID(request.request_id).version == 4
    given = cls(name="x", request_id="caller-chosen")
    assert prepare(run_job_method, given) is True and given.request_id == "caller-chosen"
    other = message_factory.GetMessageClass(pool.FindMessageTypeByName("sdktest.CreateOtherRequest"))
    assert prepare(run_job_method, other(name="x")) is False  # no request_id field: never retried
    run_job = job_pb2.RunJobRequest()
    assert prepare(run_job_method, run_job) is True and run_job.request_id  # RunJob declares request_id


def test_async_clients(sdk_service, keys):
    async def scenario():
        async with AsyncClient(sdk_service.url, keys[ServerRole.OPERATOR]) as client:
            with pytest.raises(errors.ConfigurationError, match="resolve_namespace"):
                _ = client.namespace  # a property, as on Client; it cannot await WhoAmI
            assert await client.resolve_namespace() == "team-a"
            assert client.namespace == "team-a"
            jobs = [await client.jobs.run("busybox:1.36", command=[str(n)]) for n in range(3)]
            assert (await client.jobs.get(jobs[0].job_id)).job_id == jobs[0].job_id
            listed = [job.job_id async for job in client.jobs.list(page_size=2)]
            assert listed == [j.job_id for j in reversed(jobs)]
            assert (await client.whoami()).kind == "api_key"
        async with AsyncClient(sdk_service.url, keys[ServerRole.VIEWER]) as viewer:
            with pytest.raises(errors.PermissionDenied):
                await viewer.jobs.cancel(jobs[0].job_id)
        async with AsyncAdminClient(sdk_service.url, keys[ServerRole.ADMIN]) as admin:
            issued = await admin.issue_api_key("team-b", "bot", Role.OPERATOR)
            listed = [k.key_id async for k in admin.list_api_keys("team-b", page_size=1)]
            assert len(listed) == 2 and listed[0] == issued.key.key_id  # newest first, over two pages
            with pytest.raises(errors.NotFound):
                await admin.get_namespace("nowhere")

    asyncio.run(scenario())
