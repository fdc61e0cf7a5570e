import datetime

from cpsdk._gen.controlplane import limits_pb2 as _limits_pb2
from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class WorkKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    WORK_KIND_UNSPECIFIED: _ClassVar[WorkKind]
    WORK_KIND_JOB: _ClassVar[WorkKind]
    WORK_KIND_SANDBOX: _ClassVar[WorkKind]
    WORK_KIND_BUILD: _ClassVar[WorkKind]

class Result(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RESULT_UNSPECIFIED: _ClassVar[Result]
    RESULT_EXITED: _ClassVar[Result]
    RESULT_CANCELLED: _ClassVar[Result]
    RESULT_TIMED_OUT: _ClassVar[Result]
    RESULT_ERROR: _ClassVar[Result]
    RESULT_STOPPED: _ClassVar[Result]
    RESULT_RELEASED: _ClassVar[Result]
    RESULT_BUILT: _ClassVar[Result]
WORK_KIND_UNSPECIFIED: WorkKind
WORK_KIND_JOB: WorkKind
WORK_KIND_SANDBOX: WorkKind
WORK_KIND_BUILD: WorkKind
RESULT_UNSPECIFIED: Result
RESULT_EXITED: Result
RESULT_CANCELLED: Result
RESULT_TIMED_OUT: Result
RESULT_ERROR: Result
RESULT_STOPPED: Result
RESULT_RELEASED: Result
RESULT_BUILT: Result

class Resources(_message.Message):
    __slots__ = ("memory_bytes", "milli_cpus", "max_pids")
    MEMORY_BYTES_FIELD_NUMBER: _ClassVar[int]
    MILLI_CPUS_FIELD_NUMBER: _ClassVar[int]
    MAX_PIDS_FIELD_NUMBER: _ClassVar[int]
    memory_bytes: int
    milli_cpus: int
    max_pids: int
    def __init__(self, memory_bytes: _Optional[int] = ..., milli_cpus: _Optional[int] = ..., max_pids: _Optional[int] = ...) -> None: ...

class Work(_message.Message):
    __slots__ = ("kind", "work_id", "namespace", "lease_token", "lease_expire_time", "attempt", "image", "command", "env", "resources", "timeout_seconds", "agent_key", "workspace_id", "log_offset", "pull_policy", "heartbeat_interval")
    class EnvEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    KIND_FIELD_NUMBER: _ClassVar[int]
    WORK_ID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    LEASE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    LEASE_EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    ENV_FIELD_NUMBER: _ClassVar[int]
    RESOURCES_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    AGENT_KEY_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    LOG_OFFSET_FIELD_NUMBER: _ClassVar[int]
    PULL_POLICY_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_INTERVAL_FIELD_NUMBER: _ClassVar[int]
    kind: WorkKind
    work_id: str
    namespace: str
    lease_token: str
    lease_expire_time: _timestamp_pb2.Timestamp
    attempt: int
    image: str
    command: _containers.RepeatedScalarFieldContainer[str]
    env: _containers.ScalarMap[str, str]
    resources: Resources
    timeout_seconds: int
    agent_key: str
    workspace_id: str
    log_offset: int
    pull_policy: str
    heartbeat_interval: _duration_pb2.Duration
    def __init__(self, kind: _Optional[_Union[WorkKind, str]] = ..., work_id: _Optional[str] = ..., namespace: _Optional[str] = ..., lease_token: _Optional[str] = ..., lease_expire_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., attempt: _Optional[int] = ..., image: _Optional[str] = ..., command: _Optional[_Iterable[str]] = ..., env: _Optional[_Mapping[str, str]] = ..., resources: _Optional[_Union[Resources, _Mapping]] = ..., timeout_seconds: _Optional[int] = ..., agent_key: _Optional[str] = ..., workspace_id: _Optional[str] = ..., log_offset: _Optional[int] = ..., pull_policy: _Optional[str] = ..., heartbeat_interval: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class AcquireWorkRequest(_message.Message):
    __slots__ = ("kinds", "wait_seconds", "runner_version")
    KINDS_FIELD_NUMBER: _ClassVar[int]
    WAIT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    RUNNER_VERSION_FIELD_NUMBER: _ClassVar[int]
    kinds: _containers.RepeatedScalarFieldContainer[WorkKind]
    wait_seconds: int
    runner_version: str
    def __init__(self, kinds: _Optional[_Iterable[_Union[WorkKind, str]]] = ..., wait_seconds: _Optional[int] = ..., runner_version: _Optional[str] = ...) -> None: ...

class AcquireWorkResponse(_message.Message):
    __slots__ = ("work", "retry_after")
    WORK_FIELD_NUMBER: _ClassVar[int]
    RETRY_AFTER_FIELD_NUMBER: _ClassVar[int]
    work: Work
    retry_after: _duration_pb2.Duration
    def __init__(self, work: _Optional[_Union[Work, _Mapping]] = ..., retry_after: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class HeartbeatRequest(_message.Message):
    __slots__ = ("work_id", "lease_token", "running")
    WORK_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    work_id: str
    lease_token: str
    running: bool
    def __init__(self, work_id: _Optional[str] = ..., lease_token: _Optional[str] = ..., running: _Optional[bool] = ...) -> None: ...

class HeartbeatResponse(_message.Message):
    __slots__ = ("lease_expire_time", "cancel_requested", "grace_seconds")
    LEASE_EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    CANCEL_REQUESTED_FIELD_NUMBER: _ClassVar[int]
    GRACE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    lease_expire_time: _timestamp_pb2.Timestamp
    cancel_requested: bool
    grace_seconds: int
    def __init__(self, lease_expire_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., cancel_requested: _Optional[bool] = ..., grace_seconds: _Optional[int] = ...) -> None: ...

class AppendLogsRequest(_message.Message):
    __slots__ = ("work_id", "lease_token", "offset", "data")
    WORK_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    work_id: str
    lease_token: str
    offset: int
    data: bytes
    def __init__(self, work_id: _Optional[str] = ..., lease_token: _Optional[str] = ..., offset: _Optional[int] = ..., data: _Optional[bytes] = ...) -> None: ...

class AppendLogsResponse(_message.Message):
    __slots__ = ("next_offset",)
    NEXT_OFFSET_FIELD_NUMBER: _ClassVar[int]
    next_offset: int
    def __init__(self, next_offset: _Optional[int] = ...) -> None: ...

class FinishWorkRequest(_message.Message):
    __slots__ = ("work_id", "lease_token", "result", "exit_code", "signal", "reason", "image_digest")
    WORK_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    IMAGE_DIGEST_FIELD_NUMBER: _ClassVar[int]
    work_id: str
    lease_token: str
    result: Result
    exit_code: int
    signal: int
    reason: str
    image_digest: str
    def __init__(self, work_id: _Optional[str] = ..., lease_token: _Optional[str] = ..., result: _Optional[_Union[Result, str]] = ..., exit_code: _Optional[int] = ..., signal: _Optional[int] = ..., reason: _Optional[str] = ..., image_digest: _Optional[str] = ...) -> None: ...

class FinishWorkResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
