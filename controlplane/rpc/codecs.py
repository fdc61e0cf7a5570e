"""The message codecs handed to the connectrpc runtime: its binary codec, and our JSON one.

Ours differs from connectrpc.compat's JSON codec where callers can tell: compact output, an
empty body is the empty message, errors name the field (with a google.rpc.BadRequest), and
the body's top-level keys are recorded for UpdateNamespace's full-replace rule.

A handler that already holds its response as the proto3 JSON object (`prepared`) skips
building messages on the JSON path: the JSON codec serializes that object with orjson, and
the binary codec builds the real message only when a binary client asked (with the handler's
own builder, else json_format.ParseDict of the object).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import orjson
from connectrpc.codec import Codec
from connectrpc.compat import google_protobuf_binary_codec
from google.protobuf import json_format
from google.protobuf.message import Message

from controlplane.errors import Error

from .context import _current
from .errors import to_connect_error

MAX_JSON_DEPTH = 64


@dataclass(frozen=True)
class Prepared:
    message: Message  # the placeholder the handler returned; held so its id stays its own
    obj: dict  # exactly json_format.MessageToDict of the response this stands for
    builder: Callable[[], Message] | None = None

    def build(self) -> Message:
        if self.builder is not None:
            return self.builder()
        return json_format.ParseDict(self.obj, type(self.message)())


def prepared(message_class: type[Message], obj: dict, build: Callable[[], Message] | None = None) -> Message:
    """The response whose proto3 JSON object is `obj` (it must equal json_format.MessageToDict
    of that response). `build`: makes that response as a message, for binary clients (and
    outside an RPC), faster than parsing `obj`. Inside an RPC: an empty placeholder the codecs
    recognise; outside one (commands, direct calls): the real message."""
    call = _current.get()
    if call is None:
        return build() if build is not None else json_format.ParseDict(obj, message_class())
    placeholder = message_class()
    call.prepared[id(placeholder)] = Prepared(placeholder, obj, build)
    return placeholder


def prepared_page(
    response_class: type[Message], field: str, page: list, token: str, to_json: Callable, to_proto: Callable
) -> Message:
    """A list response (`field`: its repeated field, and next_page_token) through `prepared`:
    its JSON object from `to_json` of each row, its message (binary clients) from `to_proto`."""
    obj = {response_class.DESCRIPTOR.fields_by_name[field].json_name: [to_json(row) for row in page]} if page else {}
    if token:
        obj["nextPageToken"] = token
    return prepared(
        response_class, obj, lambda: response_class(**{field: [to_proto(row) for row in page]}, next_page_token=token)
    )


def _prepared_for(message: Message) -> Prepared | None:
    call = _current.get()
    if call is None or not call.prepared:
        return None
    entry = call.prepared.get(id(message))
    return entry if entry is not None and entry.message is message else None


class JsonCodec(Codec):
    def name(self) -> str:
        return "json"

    def encode(self, message: Message) -> bytes:
        entry = _prepared_for(message)
        if entry is not None:
            return orjson.dumps(entry.obj)
        # orjson: compact like json.dumps(separators=...), but non-ASCII written as UTF-8, not
        # escaped (equal JSON); MessageToDict leaves it only strings, numbers, bools, lists and
        # objects with string keys (64-bit integers and special floats become strings).
        return orjson.dumps(json_format.MessageToDict(message))

    def decode(self, data: bytes | bytearray, message_class: type[Message]) -> Message:
        message = message_class()
        try:
            present = _parse(bytes(data), message)
        except Error as exc:
            raise to_connect_error(exc) from None
        call = _current.get()
        if call is not None:
            call.present_fields = present
        return message


def _parse(data: bytes, message: Message) -> set[str]:
    if not data.strip():
        return set()  # an empty body is the empty message
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise Error.invalid_argument("body", f"malformed JSON: {str(exc)[:200]}") from None
    if not isinstance(obj, dict):
        raise Error.invalid_argument("body", f"expected a JSON object for {message.DESCRIPTOR.full_name}")
    try:
        json_format.ParseDict(obj, message, ignore_unknown_fields=True, max_recursion_depth=MAX_JSON_DEPTH)
    except (json_format.ParseError, ValueError, TypeError, RecursionError, AttributeError) as exc:
        # The protobuf runtime's messages name the field path (e.g. "Failed to parse role field: ...").
        raise Error.invalid_argument("body", str(exc)[:300] or "invalid message") from None
    return set(obj)


class BinaryCodec(Codec):
    """The runtime's binary codec; a prepared response becomes its real message first."""

    _inner = google_protobuf_binary_codec()

    def name(self) -> str:
        return self._inner.name()

    def encode(self, message: Message) -> bytes:
        entry = _prepared_for(message)
        return self._inner.encode(entry.build() if entry is not None else message)

    def decode(self, data: bytes | bytearray, message_class: type[Message]) -> Message:
        return self._inner.decode(data, message_class)


CODECS = (BinaryCodec(), JsonCodec())
