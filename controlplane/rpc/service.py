"""Declaring RPC services: one class per proto service, implementing its generated protocol.

    class NamespaceService(Service, NamespaceServiceSync):
        descriptor = namespace_pb2.DESCRIPTOR.services_by_name["NamespaceService"]
        application = NamespaceServiceWSGIApplication

        @rpc(permission=AdminOnly())
        def get_namespace(self, request, ctx): ...

`application` is the connectrpc WSGI application generated beside the messages (*_connect.py);
it fixes each method's message types. Every proto method must have an @rpc handler declaring
its permission, checked at import time, so no method is served without one.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from connectrpc.server import ConnectWSGIApplication
from django.core.exceptions import ImproperlyConfigured
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import ServiceDescriptor

from .permissions import Permission

NO_SIDE_EFFECTS = descriptor_pb2.MethodOptions.NO_SIDE_EFFECTS


def rpc(*, permission: Permission, own_transactions: bool = False):
    """Marks a handler and declares the permission checked before it runs.

    own_transactions: the handler opens its own transactions (interceptors.Transaction)."""

    def decorate(handler: Callable) -> Callable:
        handler.rpc_permission = permission
        handler.rpc_own_transactions = own_transactions
        return handler

    return decorate


def handler_name(method: str) -> str:
    """GetNamespace → get_namespace: the name protoc-gen-connectrpc gives the handler."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", method).lower()


class Service:
    descriptor: ServiceDescriptor
    application: type[ConnectWSGIApplication]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for attribute in ("descriptor", "application"):
            if getattr(cls, attribute, None) is None:
                raise ImproperlyConfigured(f"{cls.__name__} must set `{attribute}`")
        names = {handler_name(m.name) for m in cls.descriptor.methods}
        for method in cls.descriptor.methods:
            handler = getattr(cls, handler_name(method.name), None)
            if not hasattr(handler, "rpc_permission"):
                raise ImproperlyConfigured(f"{cls.__name__} has no @rpc handler for {method.full_name}")
            # Streams run without a transaction (interceptors.py): only reads may stream.
            if method.server_streaming and method.GetOptions().idempotency_level != NO_SIDE_EFFECTS:
                raise ImproperlyConfigured(f"{method.full_name} streams, so it must be NO_SIDE_EFFECTS")
        for attr, value in vars(cls).items():
            if hasattr(value, "rpc_permission") and attr not in names:
                raise ImproperlyConfigured(f"{cls.__name__}.{attr} is not a method of {cls.descriptor.full_name}")

    def permissions(self) -> dict[str, Permission]:
        """Procedure (service/Method) → the permission its handler declares."""
        return {
            f"{self.descriptor.full_name}/{m.name}": getattr(self, handler_name(m.name)).rpc_permission
            for m in self.descriptor.methods
        }

    def own_transactions(self) -> set[str]:
        """Procedures whose handlers open their own transactions."""
        return {
            f"{self.descriptor.full_name}/{m.name}"
            for m in self.descriptor.methods
            if getattr(self, handler_name(m.name)).rpc_own_transactions
        }
