from cpsdk._gen.containers.api.v1 import namespace_pb2 as _namespace_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class WhoAmIRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class NamespaceRole(_message.Message):
    __slots__ = ("namespace", "role")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    role: _namespace_pb2.Role
    def __init__(self, namespace: _Optional[str] = ..., role: _Optional[_Union[_namespace_pb2.Role, str]] = ...) -> None: ...

class WhoAmIResponse(_message.Message):
    __slots__ = ("subject", "name", "kind", "admin", "namespaces", "scopes", "key_id", "workspace_scope")
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    ADMIN_FIELD_NUMBER: _ClassVar[int]
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_SCOPE_FIELD_NUMBER: _ClassVar[int]
    subject: str
    name: str
    kind: str
    admin: bool
    namespaces: _containers.RepeatedCompositeFieldContainer[NamespaceRole]
    scopes: _containers.RepeatedScalarFieldContainer[str]
    key_id: str
    workspace_scope: str
    def __init__(self, subject: _Optional[str] = ..., name: _Optional[str] = ..., kind: _Optional[str] = ..., admin: _Optional[bool] = ..., namespaces: _Optional[_Iterable[_Union[NamespaceRole, _Mapping]]] = ..., scopes: _Optional[_Iterable[str]] = ..., key_id: _Optional[str] = ..., workspace_scope: _Optional[str] = ...) -> None: ...
