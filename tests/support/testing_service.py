"""A test-only Connect service: slow database queries (in a write, and read-only), a slow
handler and a crash.

Mounted with override_settings(RPC_SERVICES=[..., TESTING_SERVICE]). Its descriptor is a
real proto service, built here from well-known messages, and its connectrpc application is
written the way protoc-gen-connectrpc writes one, so production code needs no test hooks and
the repository no extra generated module.
"""

from __future__ import annotations

import logging
import time

from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.server import ConnectWSGIApplication, EndpointSync
from django.db import connection
from google.protobuf import descriptor_pb2, descriptor_pool, empty_pb2

from controlplane.auth import Principal
from controlplane.rpc import AdminOnly, Service, rpc
from controlplane.rpc.service import handler_name
from namespaces.services import create_namespace

TESTING_SERVICE = "tests.support.testing_service.TestingService"
PATH = "tests.v1.TestingService/"
SLOW_QUERY_SECONDS = 5
SECRET_IN_CRASH = "password=hunter2 at db.internal:5432"
EMPTY = ".google.protobuf.Empty"
READ_ONLY = {"SlowRead"}  # idempotency_level NO_SIDE_EFFECTS: served without a transaction


def _descriptor():
    file = descriptor_pb2.FileDescriptorProto(
        name="tests/v1/testing_service.proto",
        package="tests.v1",
        dependency=[empty_pb2.DESCRIPTOR.name],
        syntax="proto3",
    )
    service = file.service.add(name="TestingService")
    for name in ("SlowQuery", "SlowRead", "SlowHandler", "WriteThenSlow", "Crash"):
        method = service.method.add(name=name, input_type=EMPTY, output_type=EMPTY)
        if name in READ_ONLY:
            method.options.idempotency_level = descriptor_pb2.MethodOptions.NO_SIDE_EFFECTS
    pool = descriptor_pool.Default()
    pool.Add(file)
    return pool.FindServiceByName("tests.v1.TestingService")


def slow_query_sql() -> str:
    if connection.vendor == "postgresql":
        return f"SELECT pg_sleep({SLOW_QUERY_SECONDS})"
    # SQLite has no sleep: count far enough to take seconds (about 4M rows/s here).
    return "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 25000000) SELECT count(*) FROM n"


DESCRIPTOR = _descriptor()


class TestingApplication(ConnectWSGIApplication):
    def __init__(self, service, **options):
        endpoints = {
            f"/{DESCRIPTOR.full_name}/{method.name}": EndpointSync.unary(
                method=MethodInfo(
                    name=method.name,
                    service_name=DESCRIPTOR.full_name,
                    input=empty_pb2.Empty,
                    output=empty_pb2.Empty,
                    idempotency_level=(
                        IdempotencyLevel.NO_SIDE_EFFECTS if method.name in READ_ONLY else IdempotencyLevel.UNKNOWN
                    ),
                    stream_type=StreamType.UNARY,
                ),
                function=getattr(service, handler_name(method.name)),
            )
            for method in DESCRIPTOR.methods
        }
        super().__init__(endpoints=endpoints, **options)

    @property
    def path(self) -> str:
        return f"/{DESCRIPTOR.full_name}"


class TestingService(Service):
    __test__ = False  # not a pytest class
    descriptor = DESCRIPTOR
    application = TestingApplication

    @rpc(permission=AdminOnly())
    def slow_query(self, request, ctx):
        # Work first, then a query that outlives any short deadline: the deadline must undo both.
        create_namespace(actor=Principal.system("tests"), name="made-before-the-slow-query")
        with connection.cursor() as cursor:
            cursor.execute(slow_query_sql())
        return empty_pb2.Empty()

    @rpc(permission=AdminOnly())
    def slow_read(self, request, ctx):
        # A read-only method runs without a transaction: the deadline must still cancel it.
        with connection.cursor() as cursor:
            cursor.execute(slow_query_sql())
        return empty_pb2.Empty()

    @rpc(permission=AdminOnly())
    def slow_handler(self, request, ctx):
        # Python work past the deadline, then a write that must not start.
        time.sleep(0.3)
        create_namespace(actor=Principal.system("tests"), name="made-after-the-deadline")
        return empty_pb2.Empty()

    @rpc(permission=AdminOnly())
    def write_then_slow(self, request, ctx):
        # A write in time, then Python work past the deadline: the caller is told the call
        # failed, so the write must not be committed.
        create_namespace(actor=Principal.system("tests"), name="written-before-the-deadline")
        time.sleep(0.3)
        return empty_pb2.Empty()

    @rpc(permission=AdminOnly())
    def crash(self, request, ctx):
        logging.getLogger(__name__).debug("about to crash")
        raise RuntimeError(f"could not connect: {SECRET_IN_CRASH}")
