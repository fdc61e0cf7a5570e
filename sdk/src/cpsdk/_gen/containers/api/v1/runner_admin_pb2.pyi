import datetime

from cpsdk._gen.controlplane import limits_pb2 as _limits_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RunnerState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RUNNER_STATE_UNSPECIFIED: _ClassVar[RunnerState]
    RUNNER_STATE_ACTIVE: _ClassVar[RunnerState]
    RUNNER_STATE_REVOKED: _ClassVar[RunnerState]
RUNNER_STATE_UNSPECIFIED: RunnerState
RUNNER_STATE_ACTIVE: RunnerState
RUNNER_STATE_REVOKED: RunnerState

class Runner(_message.Message):
    __slots__ = ("runner_id", "name", "namespaces", "create_time", "last_seen_time", "state", "work_held", "version", "key_id", "key_hint", "created_by")
    RUNNER_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    LAST_SEEN_TIME_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    WORK_HELD_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_HINT_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    runner_id: str
    name: str
    namespaces: _containers.RepeatedScalarFieldContainer[str]
    create_time: _timestamp_pb2.Timestamp
    last_seen_time: _timestamp_pb2.Timestamp
    state: RunnerState
    work_held: int
    version: str
    key_id: str
    key_hint: str
    created_by: str
    def __init__(self, runner_id: _Optional[str] = ..., name: _Optional[str] = ..., namespaces: _Optional[_Iterable[str]] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_seen_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., state: _Optional[_Union[RunnerState, str]] = ..., work_held: _Optional[int] = ..., version: _Optional[str] = ..., key_id: _Optional[str] = ..., key_hint: _Optional[str] = ..., created_by: _Optional[str] = ...) -> None: ...

class IssueRunnerKeyRequest(_message.Message):
    __slots__ = ("name", "namespaces")
    NAME_FIELD_NUMBER: _ClassVar[int]
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    name: str
    namespaces: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., namespaces: _Optional[_Iterable[str]] = ...) -> None: ...

class IssueRunnerKeyResponse(_message.Message):
    __slots__ = ("runner", "plaintext")
    RUNNER_FIELD_NUMBER: _ClassVar[int]
    PLAINTEXT_FIELD_NUMBER: _ClassVar[int]
    runner: Runner
    plaintext: str
    def __init__(self, runner: _Optional[_Union[Runner, _Mapping]] = ..., plaintext: _Optional[str] = ...) -> None: ...

class ListRunnersRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListRunnersResponse(_message.Message):
    __slots__ = ("runners", "next_page_token")
    RUNNERS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    runners: _containers.RepeatedCompositeFieldContainer[Runner]
    next_page_token: str
    def __init__(self, runners: _Optional[_Iterable[_Union[Runner, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class RevokeRunnerRequest(_message.Message):
    __slots__ = ("runner_id",)
    RUNNER_ID_FIELD_NUMBER: _ClassVar[int]
    runner_id: str
    def __init__(self, runner_id: _Optional[str] = ...) -> None: ...

class RevokeRunnerResponse(_message.Message):
    __slots__ = ("runner",)
    RUNNER_FIELD_NUMBER: _ClassVar[int]
    runner: Runner
    def __init__(self, runner: _Optional[_Union[Runner, _Mapping]] = ...) -> None: ...
