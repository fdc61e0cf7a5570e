"""google.protobuf descriptors as a protobuf-py Registry.

connectrpc (its error details, its reflection service) uses the `protobuf` (protobuf-py)
descriptor API; our messages are google.protobuf ones. `registry_for` rebuilds the google
descriptors, with their dependencies, as a protobuf-py Registry.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import Descriptor, FileDescriptor
from protobuf import Registry
from protobuf.wkt import FileDescriptorProto, FileDescriptorSet


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
