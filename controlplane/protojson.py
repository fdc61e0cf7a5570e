"""Proto3 JSON values, as json_format.MessageToDict writes them, for hot reads that build a
response's JSON object directly (the converters' *_to_json, served through
controlplane.rpc.codecs.prepared) instead of building messages and converting them."""

from __future__ import annotations

from datetime import UTC, datetime

from google.protobuf.descriptor import EnumDescriptor


def timestamp(value: datetime) -> str:
    """google.protobuf.Timestamp's JSON for a moment (naive means UTC): RFC 3339 in UTC with
    0, 3 or 6 fractional digits, as json_format trims them."""
    if value.tzinfo is not None and value.utcoffset():
        value = value.astimezone(UTC)
    text = value.isoformat()[:19]  # YYYY-MM-DDTHH:MM:SS (then fraction and offset, if any)
    micros = value.microsecond
    if micros == 0:
        return text + "Z"
    if micros % 1000 == 0:
        return f"{text}.{micros // 1000:03d}Z"
    return f"{text}.{micros:06d}Z"


def enum_names(enum: EnumDescriptor) -> dict[int, str]:
    """An enum's JSON (its value's name) by number."""
    return {value.number: value.name for value in enum.values}
