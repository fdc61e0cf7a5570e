"""The served applications: one connectrpc WSGI application per service in settings.RPC_SERVICES,
sharing one interceptor chain, plus gRPC server reflection describing them."""

from __future__ import annotations

from functools import cached_property

from connectrpc.compression.brotli import BrotliCompression
from connectrpc.compression.gzip import GzipCompression
from connectrpc.compression.zstd import ZstdCompression
from connectrpc.server import ConnectWSGIApplication
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.module_loading import import_string
from google.protobuf.descriptor import MethodDescriptor

from controlplane.observability import tracing

from . import interceptors
from .codecs import CODECS
from .reflection import reflection_applications


class _Brotli(BrotliCompression):
    def decompress(self, data, read_max_bytes=None):
        # A zero-length body is the empty message under any encoding (Connect protocol);
        # connectrpc's gzip and zstd say so, its brotli calls it truncated.
        return super().decompress(data, read_max_bytes) if data else b""


# Request and response compression, negotiated by the runtime (identity is always accepted).
COMPRESSIONS = (GzipCompression(), _Brotli(), ZstdCompression())


class Registry:
    @cached_property
    def applications(self) -> dict[str, ConnectWSGIApplication]:
        """Service full name → its application."""
        services = [import_string(dotted)() for dotted in settings.RPC_SERVICES]
        permissions = {}
        for service in services:
            if permissions.keys() & service.permissions().keys():
                raise ImproperlyConfigured(f"{service.descriptor.full_name} is registered twice")
            permissions.update(service.permissions())
        options = {"read_max_bytes": settings.RPC_MAX_REQUEST_BYTES, "compressions": COMPRESSIONS}
        own = frozenset().union(*(service.own_transactions() for service in services))
        chain = interceptors.chain(permissions, own)
        served = {
            s.descriptor.full_name: s.application(s, interceptors=chain, codecs=CODECS, **options) for s in services
        }
        # Reflection describes the public contract (the proto files), so it needs no credential
        # (docs/api.md). Its messages are protobuf-py ones: the runtime's own codecs.
        files = {s.descriptor.file.name: s.descriptor.file for s in services}.values()
        reflection_options = {**options, "read_max_bytes": settings.RPC_MAX_REFLECTION_REQUEST_BYTES}
        return {**served, **reflection_applications(files, **reflection_options)}

    @cached_property
    def methods(self) -> dict[str, MethodDescriptor]:
        """Procedure (service/Method) → its proto method, for every served service but reflection."""
        return {
            f"{method.containing_service.full_name}/{method.name}": method
            for dotted in settings.RPC_SERVICES
            for method in import_string(dotted).descriptor.methods
        }

    def get(self, service: str) -> ConnectWSGIApplication | None:
        return self.applications.get(service)

    def reset(self) -> None:
        self.__dict__.pop("applications", None)
        self.__dict__.pop("methods", None)


registry = Registry()
# Tracing set up or torn down: the chain is rebuilt with or without its server span.
tracing.on_change(registry.reset)


@receiver(setting_changed)
def _reset_registry(*, setting, **kwargs):
    # override_settings(RPC_SERVICES=..., RPC_MAX_REQUEST_BYTES=...) in tests takes effect.
    if setting in ("RPC_SERVICES", "RPC_MAX_REQUEST_BYTES", "RPC_MAX_REFLECTION_REQUEST_BYTES", "RPC_INTERCEPTORS"):
        registry.reset()
