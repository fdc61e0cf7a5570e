"""Server streams run without a transaction, so a service may declare only read-only ones."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured
from google.protobuf import descriptor_pb2, descriptor_pool

from controlplane.rpc import Authenticated, Service, rpc


def service_descriptor(idempotency: int):
    file = descriptor_pb2.FileDescriptorProto(name=f"stream_decl_{idempotency}.proto", package=f"decl{idempotency}")
    file.message_type.add(name="Empty")
    method = file.service.add(name="Streams").method.add(
        name="Follow", input_type=f".decl{idempotency}.Empty", output_type=f".decl{idempotency}.Empty"
    )
    method.server_streaming = True
    method.options.idempotency_level = idempotency
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return pool.FindServiceByName(f"decl{idempotency}.Streams")


def declare(descriptor):
    @rpc(permission=Authenticated())
    def follow(self, request, ctx):
        yield request

    return type("Streams", (Service,), {"descriptor": descriptor, "application": object, "follow": follow})


def test_a_stream_with_side_effects_is_refused_at_import():
    with pytest.raises(ImproperlyConfigured, match="streams, so it must be NO_SIDE_EFFECTS"):
        declare(service_descriptor(descriptor_pb2.MethodOptions.IDEMPOTENCY_UNKNOWN))
    assert declare(service_descriptor(descriptor_pb2.MethodOptions.NO_SIDE_EFFECTS)).descriptor.name == "Streams"
