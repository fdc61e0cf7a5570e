"""Connect unary protocol over HTTP: codecs, compression, protocol headers, limits.

Reference: connectrpc.com/docs/protocol (unary request/response).
"""

from __future__ import annotations

import gzip
import json
import re
import zlib

from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message

from .errors import Error
from .validation import validate_request

JSON = "json"
PROTO = "proto"
CONTENT_TYPES = {JSON: "application/json", PROTO: "application/proto"}
ACCEPT_POST = "application/json, application/proto"
SUPPORTED_ENCODINGS = ("gzip", "identity")
_TIMEOUT_RE = re.compile(r"\A[0-9]{1,10}\Z")
_CHARSET_RE = re.compile(r"\Acharset\s*=\s*\"?utf-?8\"?\Z", re.IGNORECASE)


class UnsupportedMediaType(Exception):
    """Not a Connect unary codec: answered with HTTP 415 and Accept-Post."""


def codec_for(content_type: str) -> str:
    """application/json (charset utf-8 allowed) or application/proto."""
    media, _, params = content_type.partition(";")
    media = media.strip().lower()
    params = params.strip()
    if media == "application/json" and (not params or _CHARSET_RE.fullmatch(params)):
        return JSON
    if media == "application/proto" and not params:
        return PROTO
    raise UnsupportedMediaType(content_type)


def check_protocol_version(value: str | None) -> None:
    if value is not None and value.strip() != "1":
        raise Error.invalid_argument(
            "Connect-Protocol-Version", f"unsupported protocol version {value!r}; only 1 is supported"
        )


def parse_timeout_ms(value: str | None) -> int | None:
    """Connect-Timeout-Ms: a positive integer of at most 10 digits."""
    if value is None:
        return None
    value = value.strip()
    if not _TIMEOUT_RE.fullmatch(value) or int(value) == 0:
        raise Error.invalid_argument(
            "Connect-Timeout-Ms", f"must be a positive integer of at most 10 digits, got {value[:32]!r}"
        )
    return int(value)


def check_content_encoding(value: str | None) -> str:
    encoding = (value or "identity").strip().lower()
    if encoding not in SUPPORTED_ENCODINGS:
        raise Error.unimplemented(
            f"Content-Encoding {encoding[:32]!r} is not supported; supported: {', '.join(SUPPORTED_ENCODINGS)}"
        )
    return encoding


def too_large(limit: int) -> Error:
    return Error.resource_exhausted(f"request body exceeds the limit of {limit} bytes")


def read_body(stream, *, content_length: int | None, encoding: str, limit: int) -> bytes:
    """Reads at most `limit` bytes of (decompressed) body; a bigger body is resource_exhausted.

    The decompressed size is bounded too, so a small gzip bomb cannot exhaust memory.
    """
    if content_length is not None and content_length > limit:
        raise too_large(limit)
    raw = stream.read(limit + 1)
    if len(raw) > limit:
        raise too_large(limit)
    if encoding == "gzip":
        return _gunzip(raw, limit)
    return raw


def _gunzip(raw: bytes, limit: int) -> bytes:
    decompressor = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        data = decompressor.decompress(raw, limit + 1)
        if len(data) > limit:
            raise too_large(limit)
        if not decompressor.eof:
            raise Error.invalid_argument("body", "truncated gzip stream")
    except zlib.error as exc:
        raise Error.invalid_argument("body", f"invalid gzip data: {exc}") from None
    return data


def decode(codec: str, body: bytes, message: Message) -> set[str] | None:
    """Fills `message` from the body; returns the top-level JSON keys present (None for binary)."""
    present = _decode(codec, body, message)
    validate_request(message)  # limits, NUL characters, well-known type ranges: for every codec
    return present


def _decode(codec: str, body: bytes, message: Message) -> set[str] | None:
    if codec == PROTO:
        try:
            message.ParseFromString(body)
        except (DecodeError, RuntimeError, ValueError) as exc:
            raise Error.invalid_argument("body", f"invalid protobuf message: {exc}") from None
        return None
    if not body.strip():
        return set()  # an empty body is the empty message
    try:
        text = body.decode("utf-8")
        obj = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise Error.invalid_argument("body", f"malformed JSON: {str(exc)[:200]}") from None
    if not isinstance(obj, dict):
        raise Error.invalid_argument("body", f"expected a JSON object for {message.DESCRIPTOR.full_name}")
    try:
        json_format.ParseDict(obj, message, ignore_unknown_fields=True, max_recursion_depth=64)
    except (json_format.ParseError, ValueError, TypeError, RecursionError, AttributeError) as exc:
        raise Error.invalid_argument("body", _clean_parse_error(str(exc))) from None
    return set(obj)


def _clean_parse_error(text: str) -> str:
    # The protobuf runtime's messages name the field path (e.g. "Failed to parse role field: ...").
    return text[:300] or "invalid message"


def encode(codec: str, message: Message) -> bytes:
    if codec == PROTO:
        return message.SerializeToString()
    return json.dumps(json_format.MessageToDict(message), separators=(",", ":")).encode()


def accepts_gzip(accept_encoding: str | None) -> bool:
    for token in (accept_encoding or "").split(","):
        name, _, params = token.strip().partition(";")
        if name.strip().lower() == "gzip" and params.replace(" ", "") not in ("q=0", "q=0.0"):
            return True
    return False


def gzip_bytes(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=5, mtime=0)
