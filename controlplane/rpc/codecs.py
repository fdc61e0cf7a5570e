"""The message codecs handed to the connectrpc runtime: its binary codec, and our JSON one.

Ours differs from connectrpc.compat's JSON codec where callers can tell: compact output, an
empty body is the empty message, errors name the field (with a google.rpc.BadRequest), and
the body's top-level keys are recorded for UpdateNamespace's full-replace rule.
"""

from __future__ import annotations

import json

from connectrpc.codec import Codec
from connectrpc.compat import google_protobuf_binary_codec
from google.protobuf import json_format
from google.protobuf.message import Message

from controlplane.errors import Error

from .context import _current
from .errors import to_connect_error

MAX_JSON_DEPTH = 64


class JsonCodec(Codec):
    def name(self) -> str:
        return "json"

    def encode(self, message: Message) -> bytes:
        return json.dumps(json_format.MessageToDict(message), separators=(",", ":")).encode()

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


CODECS = (google_protobuf_binary_codec(), JsonCodec())
