from google.protobuf import descriptor_pb2 as _descriptor_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor
LIMITS_FIELD_NUMBER: _ClassVar[int]
limits: _descriptor.FieldDescriptor

class FieldLimits(_message.Message):
    __slots__ = ("max_length", "max_items", "max_key_length")
    MAX_LENGTH_FIELD_NUMBER: _ClassVar[int]
    MAX_ITEMS_FIELD_NUMBER: _ClassVar[int]
    MAX_KEY_LENGTH_FIELD_NUMBER: _ClassVar[int]
    max_length: int
    max_items: int
    max_key_length: int
    def __init__(self, max_length: _Optional[int] = ..., max_items: _Optional[int] = ..., max_key_length: _Optional[int] = ...) -> None: ...
