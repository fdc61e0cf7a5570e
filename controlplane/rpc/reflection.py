"""gRPC server reflection for the served services (their descriptors bridged to protobuf-py's
API by controlplane.protobuf_registry)."""

from __future__ import annotations

from collections.abc import Iterable

from connectrpc.server import ConnectWSGIApplication
from connectrpc_grpcreflect import (
    ServerReflectionAlphaServiceSync,
    ServerReflectionAlphaWSGIApplication,
    ServerReflectionServiceSync,
    ServerReflectionWSGIApplication,
)
from google.protobuf.descriptor import FileDescriptor

from controlplane.protobuf_registry import registry_for

REFLECTION_SERVICES = ("grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection")


class _OneAnswer:
    """Answers the first request of a reflection stream, then ends it.

    A WSGI worker serves an HTTP/2 connection's streams one after another (gunicorn's gthread
    does), so a reflection stream kept open would hold back the call the client makes next on
    the same connection. Clients ask their question first (buf curl: the file declaring the
    service, with its dependencies) and open a new stream for another.
    """

    def server_reflection_info(self, request, ctx):
        for response in super().server_reflection_info(request, ctx):
            yield response
            return


class _Reflection(_OneAnswer, ServerReflectionServiceSync):
    pass


class _ReflectionAlpha(_OneAnswer, ServerReflectionAlphaServiceSync):
    pass


def reflection_applications(files: Iterable[FileDescriptor], **options) -> dict[str, ConnectWSGIApplication]:
    """grpc.reflection v1 and v1alpha (buf curl tries both), describing the services of `files`."""
    files = list(files)
    registry = registry_for(*files)
    described = [registry.file(f.name) for f in files]
    return {
        REFLECTION_SERVICES[0]: ServerReflectionWSGIApplication(_Reflection(*described), **options),
        REFLECTION_SERVICES[1]: ServerReflectionAlphaWSGIApplication(_ReflectionAlpha(*described), **options),
    }
