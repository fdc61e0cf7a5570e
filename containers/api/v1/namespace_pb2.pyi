import datetime

from controlplane import limits_pb2 as _limits_pb2
from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Role(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ROLE_UNSPECIFIED: _ClassVar[Role]
    ROLE_VIEWER: _ClassVar[Role]
    ROLE_OPERATOR: _ClassVar[Role]
    ROLE_ADMIN: _ClassVar[Role]

class ApiKeyKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    API_KEY_KIND_UNSPECIFIED: _ClassVar[ApiKeyKind]
    API_KEY_KIND_STANDARD: _ClassVar[ApiKeyKind]
    API_KEY_KIND_AGENT: _ClassVar[ApiKeyKind]

class ApiKeyState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    API_KEY_STATE_UNSPECIFIED: _ClassVar[ApiKeyState]
    API_KEY_STATE_ACTIVE: _ClassVar[ApiKeyState]
    API_KEY_STATE_REVOKED: _ClassVar[ApiKeyState]
    API_KEY_STATE_EXPIRED: _ClassVar[ApiKeyState]
ROLE_UNSPECIFIED: Role
ROLE_VIEWER: Role
ROLE_OPERATOR: Role
ROLE_ADMIN: Role
API_KEY_KIND_UNSPECIFIED: ApiKeyKind
API_KEY_KIND_STANDARD: ApiKeyKind
API_KEY_KIND_AGENT: ApiKeyKind
API_KEY_STATE_UNSPECIFIED: ApiKeyState
API_KEY_STATE_ACTIVE: ApiKeyState
API_KEY_STATE_REVOKED: ApiKeyState
API_KEY_STATE_EXPIRED: ApiKeyState

class GroupBinding(_message.Message):
    __slots__ = ("oidc_group", "role")
    OIDC_GROUP_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    oidc_group: str
    role: Role
    def __init__(self, oidc_group: _Optional[str] = ..., role: _Optional[_Union[Role, str]] = ...) -> None: ...

class InternalTarget(_message.Message):
    __slots__ = ("name", "host", "ports")
    NAME_FIELD_NUMBER: _ClassVar[int]
    HOST_FIELD_NUMBER: _ClassVar[int]
    PORTS_FIELD_NUMBER: _ClassVar[int]
    name: str
    host: str
    ports: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, name: _Optional[str] = ..., host: _Optional[str] = ..., ports: _Optional[_Iterable[int]] = ...) -> None: ...

class ImagePullSecret(_message.Message):
    __slots__ = ("registry", "secret_ref")
    REGISTRY_FIELD_NUMBER: _ClassVar[int]
    SECRET_REF_FIELD_NUMBER: _ClassVar[int]
    registry: str
    secret_ref: str
    def __init__(self, registry: _Optional[str] = ..., secret_ref: _Optional[str] = ...) -> None: ...

class Quotas(_message.Message):
    __slots__ = ("max_sandboxes", "max_running_jobs", "max_workspaces", "max_environments", "max_egress_grants")
    MAX_SANDBOXES_FIELD_NUMBER: _ClassVar[int]
    MAX_RUNNING_JOBS_FIELD_NUMBER: _ClassVar[int]
    MAX_WORKSPACES_FIELD_NUMBER: _ClassVar[int]
    MAX_ENVIRONMENTS_FIELD_NUMBER: _ClassVar[int]
    MAX_EGRESS_GRANTS_FIELD_NUMBER: _ClassVar[int]
    max_sandboxes: int
    max_running_jobs: int
    max_workspaces: int
    max_environments: int
    max_egress_grants: int
    def __init__(self, max_sandboxes: _Optional[int] = ..., max_running_jobs: _Optional[int] = ..., max_workspaces: _Optional[int] = ..., max_environments: _Optional[int] = ..., max_egress_grants: _Optional[int] = ...) -> None: ...

class Namespace(_message.Message):
    __slots__ = ("namespace", "groups", "internal_targets", "image_pull_secrets", "quotas", "create_time", "update_time")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    GROUPS_FIELD_NUMBER: _ClassVar[int]
    INTERNAL_TARGETS_FIELD_NUMBER: _ClassVar[int]
    IMAGE_PULL_SECRETS_FIELD_NUMBER: _ClassVar[int]
    QUOTAS_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    groups: _containers.RepeatedCompositeFieldContainer[GroupBinding]
    internal_targets: _containers.RepeatedCompositeFieldContainer[InternalTarget]
    image_pull_secrets: _containers.RepeatedCompositeFieldContainer[ImagePullSecret]
    quotas: Quotas
    create_time: _timestamp_pb2.Timestamp
    update_time: _timestamp_pb2.Timestamp
    def __init__(self, namespace: _Optional[str] = ..., groups: _Optional[_Iterable[_Union[GroupBinding, _Mapping]]] = ..., internal_targets: _Optional[_Iterable[_Union[InternalTarget, _Mapping]]] = ..., image_pull_secrets: _Optional[_Iterable[_Union[ImagePullSecret, _Mapping]]] = ..., quotas: _Optional[_Union[Quotas, _Mapping]] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ApiKey(_message.Message):
    __slots__ = ("key_id", "name", "namespace", "role", "created", "last_used", "expires_at", "revoked_at", "created_by", "kind", "state", "hint", "workspace_scope")
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    LAST_USED_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    REVOKED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    HINT_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_SCOPE_FIELD_NUMBER: _ClassVar[int]
    key_id: str
    name: str
    namespace: str
    role: Role
    created: _timestamp_pb2.Timestamp
    last_used: _timestamp_pb2.Timestamp
    expires_at: _timestamp_pb2.Timestamp
    revoked_at: _timestamp_pb2.Timestamp
    created_by: str
    kind: ApiKeyKind
    state: ApiKeyState
    hint: str
    workspace_scope: str
    def __init__(self, key_id: _Optional[str] = ..., name: _Optional[str] = ..., namespace: _Optional[str] = ..., role: _Optional[_Union[Role, str]] = ..., created: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_used: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., revoked_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., created_by: _Optional[str] = ..., kind: _Optional[_Union[ApiKeyKind, str]] = ..., state: _Optional[_Union[ApiKeyState, str]] = ..., hint: _Optional[str] = ..., workspace_scope: _Optional[str] = ...) -> None: ...

class CreateNamespaceRequest(_message.Message):
    __slots__ = ("namespace", "groups", "internal_targets", "image_pull_secrets", "quotas")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    GROUPS_FIELD_NUMBER: _ClassVar[int]
    INTERNAL_TARGETS_FIELD_NUMBER: _ClassVar[int]
    IMAGE_PULL_SECRETS_FIELD_NUMBER: _ClassVar[int]
    QUOTAS_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    groups: _containers.RepeatedCompositeFieldContainer[GroupBinding]
    internal_targets: _containers.RepeatedCompositeFieldContainer[InternalTarget]
    image_pull_secrets: _containers.RepeatedCompositeFieldContainer[ImagePullSecret]
    quotas: Quotas
    def __init__(self, namespace: _Optional[str] = ..., groups: _Optional[_Iterable[_Union[GroupBinding, _Mapping]]] = ..., internal_targets: _Optional[_Iterable[_Union[InternalTarget, _Mapping]]] = ..., image_pull_secrets: _Optional[_Iterable[_Union[ImagePullSecret, _Mapping]]] = ..., quotas: _Optional[_Union[Quotas, _Mapping]] = ...) -> None: ...

class GetNamespaceRequest(_message.Message):
    __slots__ = ("namespace",)
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    def __init__(self, namespace: _Optional[str] = ...) -> None: ...

class ListNamespacesRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListNamespacesResponse(_message.Message):
    __slots__ = ("namespaces", "next_page_token")
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    namespaces: _containers.RepeatedCompositeFieldContainer[Namespace]
    next_page_token: str
    def __init__(self, namespaces: _Optional[_Iterable[_Union[Namespace, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class UpdateNamespaceRequest(_message.Message):
    __slots__ = ("namespace", "groups", "internal_targets", "image_pull_secrets", "quotas", "update_mask")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    GROUPS_FIELD_NUMBER: _ClassVar[int]
    INTERNAL_TARGETS_FIELD_NUMBER: _ClassVar[int]
    IMAGE_PULL_SECRETS_FIELD_NUMBER: _ClassVar[int]
    QUOTAS_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    groups: _containers.RepeatedCompositeFieldContainer[GroupBinding]
    internal_targets: _containers.RepeatedCompositeFieldContainer[InternalTarget]
    image_pull_secrets: _containers.RepeatedCompositeFieldContainer[ImagePullSecret]
    quotas: Quotas
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, namespace: _Optional[str] = ..., groups: _Optional[_Iterable[_Union[GroupBinding, _Mapping]]] = ..., internal_targets: _Optional[_Iterable[_Union[InternalTarget, _Mapping]]] = ..., image_pull_secrets: _Optional[_Iterable[_Union[ImagePullSecret, _Mapping]]] = ..., quotas: _Optional[_Union[Quotas, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class RegisterInternalTargetRequest(_message.Message):
    __slots__ = ("namespace", "target")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    target: InternalTarget
    def __init__(self, namespace: _Optional[str] = ..., target: _Optional[_Union[InternalTarget, _Mapping]] = ...) -> None: ...

class IssueApiKeyRequest(_message.Message):
    __slots__ = ("namespace", "name", "role", "expires_at")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    name: str
    role: Role
    expires_at: _timestamp_pb2.Timestamp
    def __init__(self, namespace: _Optional[str] = ..., name: _Optional[str] = ..., role: _Optional[_Union[Role, str]] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class IssueApiKeyResponse(_message.Message):
    __slots__ = ("key", "plaintext")
    KEY_FIELD_NUMBER: _ClassVar[int]
    PLAINTEXT_FIELD_NUMBER: _ClassVar[int]
    key: ApiKey
    plaintext: str
    def __init__(self, key: _Optional[_Union[ApiKey, _Mapping]] = ..., plaintext: _Optional[str] = ...) -> None: ...

class ListApiKeysRequest(_message.Message):
    __slots__ = ("namespace", "page_size", "page_token")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    page_size: int
    page_token: str
    def __init__(self, namespace: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListApiKeysResponse(_message.Message):
    __slots__ = ("keys", "next_page_token")
    KEYS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    keys: _containers.RepeatedCompositeFieldContainer[ApiKey]
    next_page_token: str
    def __init__(self, keys: _Optional[_Iterable[_Union[ApiKey, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class RevokeApiKeyRequest(_message.Message):
    __slots__ = ("key_id",)
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    key_id: str
    def __init__(self, key_id: _Optional[str] = ...) -> None: ...

class RevokeApiKeyResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
