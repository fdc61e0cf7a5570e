"""Checks every decoded request before any handler or the database sees it, whatever the codec.

`validate_request(message)` walks the message by its descriptor and refuses, as invalid_argument
naming the field in its JSON form (e.g. groups[1].oidcGroup) and the limit:
- strings longer than their declared (controlplane.limits) max_length, and lists or maps with
  more than max_items (the limits live beside the fields in proto/, see controlplane/limits.proto);
- NUL characters in strings (PostgreSQL text cannot hold them);
- google.protobuf.Timestamp and Duration outside their documented ranges, which the binary codec
  lets through (the JSON codec refuses them while parsing).

It depends on nothing but protobuf, so any transport calls it once per request.
"""

from __future__ import annotations

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from controlplane import limits_pb2

from .errors import Error

# google/protobuf/timestamp.proto: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z.
MIN_TIMESTAMP_SECONDS = -62_135_596_800
MAX_TIMESTAMP_SECONDS = 253_402_300_799
# google/protobuf/duration.proto: about ±10,000 years; nanos carry the sign of seconds.
MAX_DURATION_SECONDS = 315_576_000_000
MAX_NANOS = 999_999_999


def validate_request(message: Message) -> None:
    _check_message(message, "")


def limits_of(field: FieldDescriptor) -> limits_pb2.FieldLimits:
    """The field's declared limits (all zero when it declares none)."""
    return field.GetOptions().Extensions[limits_pb2.limits]


def _check_message(message: Message, prefix: str) -> None:
    descriptor = message.DESCRIPTOR
    well_known = _WELL_KNOWN.get(descriptor.full_name)
    if well_known is not None:
        well_known(message, prefix.rstrip(".") or descriptor.name)
        return
    for field, value in message.ListFields():
        _check_field(field, value, f"{prefix}{field.json_name}")


def _check_field(field: FieldDescriptor, value, name: str) -> None:
    limits = limits_of(field)
    if _is_map(field):
        _check_items(name, len(value), limits)
        for key in value:
            if isinstance(key, str):
                _check_string(name, key, limits.max_key_length, what="keys")
            _check_value(value[key], f"{name}[{key!r}]", limits)
    elif field.is_repeated:
        _check_items(name, len(value), limits)
        for index, item in enumerate(value):
            _check_value(item, f"{name}[{index}]", limits)
    elif field.message_type is not None and field.message_type.full_name == "google.protobuf.FieldMask":
        _check_items(name, len(value.paths), limits)
        for path in value.paths:
            _check_string(name, path, limits.max_length, what="paths")
    else:
        _check_value(value, name, limits)


def _check_value(value, name: str, limits: limits_pb2.FieldLimits) -> None:
    if isinstance(value, Message):
        _check_message(value, name + ".")
    elif isinstance(value, str):
        _check_string(name, value, limits.max_length)


def _check_string(name: str, value: str, limit: int, what: str = "") -> None:
    """`what` names the part of the field checked ("keys" of a map, "paths" of a mask)."""
    if limit and len(value) > limit:
        lead = f"{what} must be " if what else ""
        raise Error.invalid_argument(name, f"{lead}at most {limit} characters, got {len(value)}")
    if "\x00" in value:
        raise Error.invalid_argument(name, f"{what} must not contain NUL characters".lstrip())


def _check_items(name: str, count: int, limits: limits_pb2.FieldLimits) -> None:
    if limits.max_items and count > limits.max_items:
        raise Error.invalid_argument(name, f"at most {limits.max_items} items, got {count}")


def _is_map(field: FieldDescriptor) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


def _check_timestamp(message: Message, name: str) -> None:
    if not MIN_TIMESTAMP_SECONDS <= message.seconds <= MAX_TIMESTAMP_SECONDS:
        raise Error.invalid_argument(
            name, "must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999999Z (seconds out of range)"
        )
    if not 0 <= message.nanos <= MAX_NANOS:
        raise Error.invalid_argument(name, f"nanos must be between 0 and {MAX_NANOS}, got {message.nanos}")


def _check_duration(message: Message, name: str) -> None:
    if not -MAX_DURATION_SECONDS <= message.seconds <= MAX_DURATION_SECONDS:
        raise Error.invalid_argument(name, f"seconds must be within ±{MAX_DURATION_SECONDS}, got {message.seconds}")
    if not -MAX_NANOS <= message.nanos <= MAX_NANOS or (message.seconds * message.nanos < 0):
        raise Error.invalid_argument(
            name, f"nanos must be within ±{MAX_NANOS} and carry the sign of seconds, got {message.nanos}"
        )


_WELL_KNOWN = {
    "google.protobuf.Timestamp": _check_timestamp,
    "google.protobuf.Duration": _check_duration,
}
