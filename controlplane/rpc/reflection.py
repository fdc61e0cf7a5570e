"""gRPC server reflection for the served services, and the descriptor bridge it needs.

connectrpc and its reflection service use the `protobuf` (protobuf-py) descriptor API; our
messages are google.protobuf ones. `registry_for` rebuilds the google descriptors (with their
dependencies) as a protobuf-py Registry.
"""

from __future__ import annotations

from collections.abc import Iterable

from connectrpc.server import ConnectWSGIApplication
from connectrpc_grpcreflect import (
    ServerReflectionAlphaServiceSync,
    ServerReflectionAlphaWSGIApplication,
    ServerReflectionServiceSync,
    ServerReflectionWSGIApplication,
)
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import Descriptor, FileDescriptor
from protobuf import Registry
from protobuf.wkt import FileDescriptorProto, FileDescriptorSet

REFLECTION_SERVICES = ("grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection")


def registry_for(*files: FileDescriptor) -> Registry:
    """A protobuf-py Registry holding `files` and everything they import."""
    ordered: list[FileDescriptor] = []
    for file in files:
        _add_with_dependencies(file, ordered)
    return FileDescriptorSet(file=[_converted(f) for f in ordered]).to_registry()


def _add_with_dependencies(file: FileDescriptor, ordered: list[FileDescriptor]) -> None:
    if any(f.name == file.name for f in ordered):
        return
    for dependency in file.dependencies:
        _add_with_dependencies(dependency, ordered)
    ordered.append(file)


def _converted(file: FileDescriptor) -> FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto()
    file.CopyToProto(proto)
    # CopyToProto leaves json_name out; protoc fills it, and JSON and reflection clients need it.
    for message_proto, message in zip(proto.message_type, file.message_types_by_name.values(), strict=True):
        _fill_json_names(message_proto, message)
    return FileDescriptorProto.from_binary(proto.SerializeToString())


def _fill_json_names(proto: descriptor_pb2.DescriptorProto, message: Descriptor) -> None:
    for field_proto, field in zip(proto.field, message.fields, strict=True):
        field_proto.json_name = field.json_name
    for nested_proto, nested in zip(proto.nested_type, message.nested_types, strict=True):
        _fill_json_names(nested_proto, nested)


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
