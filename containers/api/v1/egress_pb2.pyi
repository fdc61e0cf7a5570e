import datetime

from controlplane import limits_pb2 as _limits_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class EgressTargetKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EGRESS_TARGET_KIND_UNSPECIFIED: _ClassVar[EgressTargetKind]
    EGRESS_TARGET_KIND_HOST: _ClassVar[EgressTargetKind]
    EGRESS_TARGET_KIND_INTERNAL: _ClassVar[EgressTargetKind]

class EgressEventKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EGRESS_EVENT_KIND_UNSPECIFIED: _ClassVar[EgressEventKind]
    EGRESS_EVENT_KIND_GRANTED: _ClassVar[EgressEventKind]
    EGRESS_EVENT_KIND_REVOKED: _ClassVar[EgressEventKind]
    EGRESS_EVENT_KIND_CONNECTION: _ClassVar[EgressEventKind]
EGRESS_TARGET_KIND_UNSPECIFIED: EgressTargetKind
EGRESS_TARGET_KIND_HOST: EgressTargetKind
EGRESS_TARGET_KIND_INTERNAL: EgressTargetKind
EGRESS_EVENT_KIND_UNSPECIFIED: EgressEventKind
EGRESS_EVENT_KIND_GRANTED: EgressEventKind
EGRESS_EVENT_KIND_REVOKED: EgressEventKind
EGRESS_EVENT_KIND_CONNECTION: EgressEventKind

class EgressGrant(_message.Message):
    __slots__ = ("grant_id", "namespace", "target", "kind", "create_time", "created_by")
    GRANT_ID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    grant_id: str
    namespace: str
    target: str
    kind: EgressTargetKind
    create_time: _timestamp_pb2.Timestamp
    created_by: str
    def __init__(self, grant_id: _Optional[str] = ..., namespace: _Optional[str] = ..., target: _Optional[str] = ..., kind: _Optional[_Union[EgressTargetKind, str]] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., created_by: _Optional[str] = ...) -> None: ...

class EgressEvent(_message.Message):
    __slots__ = ("namespace", "kind", "target", "grant_id", "sandbox_id", "allowed", "actor", "event_time")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    GRANT_ID_FIELD_NUMBER: _ClassVar[int]
    SANDBOX_ID_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    EVENT_TIME_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    kind: EgressEventKind
    target: str
    grant_id: str
    sandbox_id: str
    allowed: bool
    actor: str
    event_time: _timestamp_pb2.Timestamp
    def __init__(self, namespace: _Optional[str] = ..., kind: _Optional[_Union[EgressEventKind, str]] = ..., target: _Optional[str] = ..., grant_id: _Optional[str] = ..., sandbox_id: _Optional[str] = ..., allowed: _Optional[bool] = ..., actor: _Optional[str] = ..., event_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GrantEgressRequest(_message.Message):
    __slots__ = ("namespace", "target")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    target: str
    def __init__(self, namespace: _Optional[str] = ..., target: _Optional[str] = ...) -> None: ...

class GrantEgressResponse(_message.Message):
    __slots__ = ("grant",)
    GRANT_FIELD_NUMBER: _ClassVar[int]
    grant: EgressGrant
    def __init__(self, grant: _Optional[_Union[EgressGrant, _Mapping]] = ...) -> None: ...

class RevokeEgressRequest(_message.Message):
    __slots__ = ("grant_id",)
    GRANT_ID_FIELD_NUMBER: _ClassVar[int]
    grant_id: str
    def __init__(self, grant_id: _Optional[str] = ...) -> None: ...

class RevokeEgressResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListEgressGrantsRequest(_message.Message):
    __slots__ = ("namespace", "page_size", "page_token")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    page_size: int
    page_token: str
    def __init__(self, namespace: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListEgressGrantsResponse(_message.Message):
    __slots__ = ("grants", "next_page_token")
    GRANTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    grants: _containers.RepeatedCompositeFieldContainer[EgressGrant]
    next_page_token: str
    def __init__(self, grants: _Optional[_Iterable[_Union[EgressGrant, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListEgressEventsRequest(_message.Message):
    __slots__ = ("namespace", "page_size", "page_token")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    page_size: int
    page_token: str
    def __init__(self, namespace: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListEgressEventsResponse(_message.Message):
    __slots__ = ("events", "next_page_token")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[EgressEvent]
    next_page_token: str
    def __init__(self, events: _Optional[_Iterable[_Union[EgressEvent, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ReportEgressEventRequest(_message.Message):
    __slots__ = ("sandbox_id", "target", "allowed")
    SANDBOX_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_FIELD_NUMBER: _ClassVar[int]
    sandbox_id: str
    target: str
    allowed: bool
    def __init__(self, sandbox_id: _Optional[str] = ..., target: _Optional[str] = ..., allowed: _Optional[bool] = ...) -> None: ...

class ReportEgressEventResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: EgressEvent
    def __init__(self, event: _Optional[_Union[EgressEvent, _Mapping]] = ...) -> None: ...
