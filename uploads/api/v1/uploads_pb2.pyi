import datetime

from controlplane import limits_pb2 as _limits_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class IntegrationFolderBehavior(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INTEGRATION_FOLDER_BEHAVIOR_UNSPECIFIED: _ClassVar[IntegrationFolderBehavior]
    INTEGRATION_FOLDER_BEHAVIOR_MIRROR: _ClassVar[IntegrationFolderBehavior]
    INTEGRATION_FOLDER_BEHAVIOR_FLATTEN: _ClassVar[IntegrationFolderBehavior]
    INTEGRATION_FOLDER_BEHAVIOR_LINK: _ClassVar[IntegrationFolderBehavior]

class IntegrationMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INTEGRATION_MODE_UNSPECIFIED: _ClassVar[IntegrationMode]
    INTEGRATION_MODE_IMPORT: _ClassVar[IntegrationMode]
    INTEGRATION_MODE_SYNC: _ClassVar[IntegrationMode]
    INTEGRATION_MODE_EXPORT: _ClassVar[IntegrationMode]

class MetadataValueType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    METADATA_VALUE_TYPE_UNSPECIFIED: _ClassVar[MetadataValueType]
    METADATA_VALUE_TYPE_STRING: _ClassVar[MetadataValueType]
    METADATA_VALUE_TYPE_BOOL: _ClassVar[MetadataValueType]
    METADATA_VALUE_TYPE_NUMBER: _ClassVar[MetadataValueType]
    METADATA_VALUE_TYPE_ARRAY: _ClassVar[MetadataValueType]
    METADATA_VALUE_TYPE_OBJECT: _ClassVar[MetadataValueType]
INTEGRATION_FOLDER_BEHAVIOR_UNSPECIFIED: IntegrationFolderBehavior
INTEGRATION_FOLDER_BEHAVIOR_MIRROR: IntegrationFolderBehavior
INTEGRATION_FOLDER_BEHAVIOR_FLATTEN: IntegrationFolderBehavior
INTEGRATION_FOLDER_BEHAVIOR_LINK: IntegrationFolderBehavior
INTEGRATION_MODE_UNSPECIFIED: IntegrationMode
INTEGRATION_MODE_IMPORT: IntegrationMode
INTEGRATION_MODE_SYNC: IntegrationMode
INTEGRATION_MODE_EXPORT: IntegrationMode
METADATA_VALUE_TYPE_UNSPECIFIED: MetadataValueType
METADATA_VALUE_TYPE_STRING: MetadataValueType
METADATA_VALUE_TYPE_BOOL: MetadataValueType
METADATA_VALUE_TYPE_NUMBER: MetadataValueType
METADATA_VALUE_TYPE_ARRAY: MetadataValueType
METADATA_VALUE_TYPE_OBJECT: MetadataValueType

class MetadataValue(_message.Message):
    __slots__ = ("string_value", "bool_value", "number_value", "array_value", "object_value")
    class ObjectValueEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: MetadataValue
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[MetadataValue, _Mapping]] = ...) -> None: ...
    STRING_VALUE_FIELD_NUMBER: _ClassVar[int]
    BOOL_VALUE_FIELD_NUMBER: _ClassVar[int]
    NUMBER_VALUE_FIELD_NUMBER: _ClassVar[int]
    ARRAY_VALUE_FIELD_NUMBER: _ClassVar[int]
    OBJECT_VALUE_FIELD_NUMBER: _ClassVar[int]
    string_value: str
    bool_value: bool
    number_value: float
    array_value: _containers.RepeatedCompositeFieldContainer[MetadataValue]
    object_value: _containers.MessageMap[str, MetadataValue]
    def __init__(self, string_value: _Optional[str] = ..., bool_value: _Optional[bool] = ..., number_value: _Optional[float] = ..., array_value: _Optional[_Iterable[_Union[MetadataValue, _Mapping]]] = ..., object_value: _Optional[_Mapping[str, MetadataValue]] = ...) -> None: ...

class MetadataKv(_message.Message):
    __slots__ = ("key", "value_type", "value", "title", "icon_name", "hidden_from_users")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_TYPE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    ICON_NAME_FIELD_NUMBER: _ClassVar[int]
    HIDDEN_FROM_USERS_FIELD_NUMBER: _ClassVar[int]
    key: str
    value_type: MetadataValueType
    value: MetadataValue
    title: str
    icon_name: str
    hidden_from_users: bool
    def __init__(self, key: _Optional[str] = ..., value_type: _Optional[_Union[MetadataValueType, str]] = ..., value: _Optional[_Union[MetadataValue, _Mapping]] = ..., title: _Optional[str] = ..., icon_name: _Optional[str] = ..., hidden_from_users: _Optional[bool] = ...) -> None: ...

class Integration(_message.Message):
    __slots__ = ("integration_id", "name", "oauth_client_id", "folder_behavior", "folder_link_url", "mode", "bucket_launcher_enabled")
    INTEGRATION_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    OAUTH_CLIENT_ID_FIELD_NUMBER: _ClassVar[int]
    FOLDER_BEHAVIOR_FIELD_NUMBER: _ClassVar[int]
    FOLDER_LINK_URL_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    BUCKET_LAUNCHER_ENABLED_FIELD_NUMBER: _ClassVar[int]
    integration_id: str
    name: str
    oauth_client_id: str
    folder_behavior: IntegrationFolderBehavior
    folder_link_url: str
    mode: IntegrationMode
    bucket_launcher_enabled: bool
    def __init__(self, integration_id: _Optional[str] = ..., name: _Optional[str] = ..., oauth_client_id: _Optional[str] = ..., folder_behavior: _Optional[_Union[IntegrationFolderBehavior, str]] = ..., folder_link_url: _Optional[str] = ..., mode: _Optional[_Union[IntegrationMode, str]] = ..., bucket_launcher_enabled: _Optional[bool] = ...) -> None: ...

class MetaUploadType(_message.Message):
    __slots__ = ("name", "n", "filename")
    NAME_FIELD_NUMBER: _ClassVar[int]
    N_FIELD_NUMBER: _ClassVar[int]
    FILENAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    n: int
    filename: str
    def __init__(self, name: _Optional[str] = ..., n: _Optional[int] = ..., filename: _Optional[str] = ...) -> None: ...

class MetaUpload(_message.Message):
    __slots__ = ("type", "metadata_id", "upload_url", "download_url")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    METADATA_ID_FIELD_NUMBER: _ClassVar[int]
    UPLOAD_URL_FIELD_NUMBER: _ClassVar[int]
    DOWNLOAD_URL_FIELD_NUMBER: _ClassVar[int]
    type: MetaUploadType
    metadata_id: str
    upload_url: str
    download_url: str
    def __init__(self, type: _Optional[_Union[MetaUploadType, _Mapping]] = ..., metadata_id: _Optional[str] = ..., upload_url: _Optional[str] = ..., download_url: _Optional[str] = ...) -> None: ...

class Alias(_message.Message):
    __slots__ = ("alias_id", "upload_id", "path", "slug", "url", "has_password", "expires_at", "max_uses", "use_count", "allowed_user_ids", "created_at", "external_path")
    ALIAS_ID_FIELD_NUMBER: _ClassVar[int]
    UPLOAD_ID_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    SLUG_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    HAS_PASSWORD_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    MAX_USES_FIELD_NUMBER: _ClassVar[int]
    USE_COUNT_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_USER_IDS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_PATH_FIELD_NUMBER: _ClassVar[int]
    alias_id: str
    upload_id: str
    path: str
    slug: str
    url: str
    has_password: bool
    expires_at: _timestamp_pb2.Timestamp
    max_uses: int
    use_count: int
    allowed_user_ids: _containers.RepeatedScalarFieldContainer[str]
    created_at: _timestamp_pb2.Timestamp
    external_path: str
    def __init__(self, alias_id: _Optional[str] = ..., upload_id: _Optional[str] = ..., path: _Optional[str] = ..., slug: _Optional[str] = ..., url: _Optional[str] = ..., has_password: _Optional[bool] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., max_uses: _Optional[int] = ..., use_count: _Optional[int] = ..., allowed_user_ids: _Optional[_Iterable[str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., external_path: _Optional[str] = ...) -> None: ...

class UserRef(_message.Message):
    __slots__ = ("user_id", "username")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    USERNAME_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    username: str
    def __init__(self, user_id: _Optional[str] = ..., username: _Optional[str] = ...) -> None: ...

class Upload(_message.Message):
    __slots__ = ("upload_id", "path", "slug", "url", "content_url", "size_bytes", "tags", "integration_id", "integration", "allow_any_extension", "default_slug_extension", "generated_description", "meta_uploads", "private", "aliases", "created_at", "updated_at", "author", "last_modified_by", "thumbnail_generation_version", "ai_description_generation_version", "ai_tags_generation_version", "virus_scan_generation_version", "ai_description_input_ref", "intent_metadata", "external_path", "order", "is_virtual_file", "integration_hidden", "version", "thumbnail_content_type_urn", "thumbnail_content_type_icon_name", "thumbnail_content_type_icon_url", "metadata_kvs")
    class IntentMetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: _struct_pb2.Struct
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...
    UPLOAD_ID_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    SLUG_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    CONTENT_URL_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    INTEGRATION_ID_FIELD_NUMBER: _ClassVar[int]
    INTEGRATION_FIELD_NUMBER: _ClassVar[int]
    ALLOW_ANY_EXTENSION_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_SLUG_EXTENSION_FIELD_NUMBER: _ClassVar[int]
    GENERATED_DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    META_UPLOADS_FIELD_NUMBER: _ClassVar[int]
    PRIVATE_FIELD_NUMBER: _ClassVar[int]
    ALIASES_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    LAST_MODIFIED_BY_FIELD_NUMBER: _ClassVar[int]
    THUMBNAIL_GENERATION_VERSION_FIELD_NUMBER: _ClassVar[int]
    AI_DESCRIPTION_GENERATION_VERSION_FIELD_NUMBER: _ClassVar[int]
    AI_TAGS_GENERATION_VERSION_FIELD_NUMBER: _ClassVar[int]
    VIRUS_SCAN_GENERATION_VERSION_FIELD_NUMBER: _ClassVar[int]
    AI_DESCRIPTION_INPUT_REF_FIELD_NUMBER: _ClassVar[int]
    INTENT_METADATA_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_PATH_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    IS_VIRTUAL_FILE_FIELD_NUMBER: _ClassVar[int]
    INTEGRATION_HIDDEN_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    THUMBNAIL_CONTENT_TYPE_URN_FIELD_NUMBER: _ClassVar[int]
    THUMBNAIL_CONTENT_TYPE_ICON_NAME_FIELD_NUMBER: _ClassVar[int]
    THUMBNAIL_CONTENT_TYPE_ICON_URL_FIELD_NUMBER: _ClassVar[int]
    METADATA_KVS_FIELD_NUMBER: _ClassVar[int]
    upload_id: str
    path: str
    slug: str
    url: str
    content_url: str
    size_bytes: int
    tags: _containers.RepeatedScalarFieldContainer[str]
    integration_id: str
    integration: Integration
    allow_any_extension: bool
    default_slug_extension: str
    generated_description: str
    meta_uploads: _containers.RepeatedCompositeFieldContainer[MetaUpload]
    private: bool
    aliases: _containers.RepeatedCompositeFieldContainer[Alias]
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    author: UserRef
    last_modified_by: UserRef
    thumbnail_generation_version: int
    ai_description_generation_version: int
    ai_tags_generation_version: int
    virus_scan_generation_version: int
    ai_description_input_ref: str
    intent_metadata: _containers.MessageMap[str, _struct_pb2.Struct]
    external_path: str
    order: int
    is_virtual_file: bool
    integration_hidden: bool
    version: int
    thumbnail_content_type_urn: str
    thumbnail_content_type_icon_name: str
    thumbnail_content_type_icon_url: str
    metadata_kvs: _containers.RepeatedCompositeFieldContainer[MetadataKv]
    def __init__(self, upload_id: _Optional[str] = ..., path: _Optional[str] = ..., slug: _Optional[str] = ..., url: _Optional[str] = ..., content_url: _Optional[str] = ..., size_bytes: _Optional[int] = ..., tags: _Optional[_Iterable[str]] = ..., integration_id: _Optional[str] = ..., integration: _Optional[_Union[Integration, _Mapping]] = ..., allow_any_extension: _Optional[bool] = ..., default_slug_extension: _Optional[str] = ..., generated_description: _Optional[str] = ..., meta_uploads: _Optional[_Iterable[_Union[MetaUpload, _Mapping]]] = ..., private: _Optional[bool] = ..., aliases: _Optional[_Iterable[_Union[Alias, _Mapping]]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., author: _Optional[_Union[UserRef, _Mapping]] = ..., last_modified_by: _Optional[_Union[UserRef, _Mapping]] = ..., thumbnail_generation_version: _Optional[int] = ..., ai_description_generation_version: _Optional[int] = ..., ai_tags_generation_version: _Optional[int] = ..., virus_scan_generation_version: _Optional[int] = ..., ai_description_input_ref: _Optional[str] = ..., intent_metadata: _Optional[_Mapping[str, _struct_pb2.Struct]] = ..., external_path: _Optional[str] = ..., order: _Optional[int] = ..., is_virtual_file: _Optional[bool] = ..., integration_hidden: _Optional[bool] = ..., version: _Optional[int] = ..., thumbnail_content_type_urn: _Optional[str] = ..., thumbnail_content_type_icon_name: _Optional[str] = ..., thumbnail_content_type_icon_url: _Optional[str] = ..., metadata_kvs: _Optional[_Iterable[_Union[MetadataKv, _Mapping]]] = ...) -> None: ...

class BucketRef(_message.Message):
    __slots__ = ("bucket_id", "namespace", "name")
    BUCKET_ID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    bucket_id: str
    namespace: str
    name: str
    def __init__(self, bucket_id: _Optional[str] = ..., namespace: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class MetadataFilter(_message.Message):
    __slots__ = ("key", "string_value", "bool_value")
    KEY_FIELD_NUMBER: _ClassVar[int]
    STRING_VALUE_FIELD_NUMBER: _ClassVar[int]
    BOOL_VALUE_FIELD_NUMBER: _ClassVar[int]
    key: str
    string_value: str
    bool_value: bool
    def __init__(self, key: _Optional[str] = ..., string_value: _Optional[str] = ..., bool_value: _Optional[bool] = ...) -> None: ...

class ListUploadsRequest(_message.Message):
    __slots__ = ("bucket", "path", "days_from", "days_to", "tags", "date_from", "date_to", "slug", "sort_by", "sort_order", "metadata_filters", "page_size", "cursor")
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    DAYS_FROM_FIELD_NUMBER: _ClassVar[int]
    DAYS_TO_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    DATE_FROM_FIELD_NUMBER: _ClassVar[int]
    DATE_TO_FIELD_NUMBER: _ClassVar[int]
    SLUG_FIELD_NUMBER: _ClassVar[int]
    SORT_BY_FIELD_NUMBER: _ClassVar[int]
    SORT_ORDER_FIELD_NUMBER: _ClassVar[int]
    METADATA_FILTERS_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    bucket: BucketRef
    path: str
    days_from: int
    days_to: int
    tags: _containers.RepeatedScalarFieldContainer[str]
    date_from: _timestamp_pb2.Timestamp
    date_to: _timestamp_pb2.Timestamp
    slug: str
    sort_by: str
    sort_order: str
    metadata_filters: _containers.RepeatedCompositeFieldContainer[MetadataFilter]
    page_size: int
    cursor: str
    def __init__(self, bucket: _Optional[_Union[BucketRef, _Mapping]] = ..., path: _Optional[str] = ..., days_from: _Optional[int] = ..., days_to: _Optional[int] = ..., tags: _Optional[_Iterable[str]] = ..., date_from: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., date_to: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., slug: _Optional[str] = ..., sort_by: _Optional[str] = ..., sort_order: _Optional[str] = ..., metadata_filters: _Optional[_Iterable[_Union[MetadataFilter, _Mapping]]] = ..., page_size: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListUploadsResponse(_message.Message):
    __slots__ = ("uploads", "next_cursor")
    UPLOADS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    uploads: _containers.RepeatedCompositeFieldContainer[Upload]
    next_cursor: str
    def __init__(self, uploads: _Optional[_Iterable[_Union[Upload, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...
