"""Declaring RPC services: one class per proto service, one decorated method per RPC.

    class NamespaceService(Service):
        descriptor = namespace_pb2.DESCRIPTOR.services_by_name["NamespaceService"]

        @rpc(request=pb.GetNamespaceRequest, response=pb.Namespace, permission=AdminOnly())
        def GetNamespace(self, request, context): ...

The declared message types are checked against the proto at import time, and every
proto method must have a handler, so the code cannot drift from the contract.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.core.exceptions import ImproperlyConfigured
from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message import Message

from controlplane.auth import Principal

from .permissions import Permission


@dataclass
class Context:
    """What a handler knows about the call besides the request message."""

    principal: Principal
    deadline: float | None = None  # time.monotonic() value
    # Top-level JSON keys present in the body (None for binary), for full-replace updates.
    present_fields: set[str] | None = None


@dataclass(frozen=True)
class MethodSpec:
    request: type[Message]
    response: type[Message]
    permission: Permission


def rpc(*, request: type[Message], response: type[Message], permission: Permission):
    """Marks a handler and declares its messages and the permission checked before it runs."""

    def decorate(handler: Callable) -> Callable:
        handler.rpc_spec = MethodSpec(request=request, response=response, permission=permission)
        return handler

    return decorate


@dataclass(frozen=True)
class Procedure:
    """A bound, routable RPC: /<service full name>/<method name>."""

    path: str
    spec: MethodSpec
    handler: Callable[[Message, Context], Message]


class Service:
    descriptor: ServiceDescriptor

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        descriptor = getattr(cls, "descriptor", None)
        if descriptor is None:
            raise ImproperlyConfigured(f"{cls.__name__} must set `descriptor`")
        for method in descriptor.methods:
            handler = getattr(cls, method.name, None)
            spec = getattr(handler, "rpc_spec", None)
            if spec is None:
                raise ImproperlyConfigured(f"{cls.__name__} has no @rpc handler for {method.full_name}")
            for declared, expected, what in (
                (spec.request, method.input_type, "request"),
                (spec.response, method.output_type, "response"),
            ):
                if declared.DESCRIPTOR.full_name != expected.full_name:
                    raise ImproperlyConfigured(
                        f"{cls.__name__}.{method.name} declares {what} {declared.DESCRIPTOR.full_name}, "
                        f"the proto says {expected.full_name}"
                    )
        names = {m.name for m in descriptor.methods}
        for attr, value in vars(cls).items():
            if hasattr(value, "rpc_spec") and attr not in names:
                raise ImproperlyConfigured(f"{cls.__name__}.{attr} is not a method of {descriptor.full_name}")

    def procedures(self) -> list[Procedure]:
        return [
            Procedure(
                path=f"{self.descriptor.full_name}/{method.name}",
                spec=getattr(self, method.name).rpc_spec,
                handler=getattr(self, method.name),
            )
            for method in self.descriptor.methods
        ]
