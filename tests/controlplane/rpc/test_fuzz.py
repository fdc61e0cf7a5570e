"""Random and malformed requests to every registered procedure, with an admin key.

The property: never a 500; always a 200 whose body decodes as the declared response, or
a well-formed Connect error whose code matches its HTTP status.
"""

from __future__ import annotations

import gzip
import json

import pytest
from google.protobuf import json_format, message_factory
from google.protobuf.descriptor import FieldDescriptor
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controlplane.rpc.registry import registry
from controlplane.rpc.validation import limits_of
from tests.support.connect import HTTP_STATUS, assert_error_shape

pytestmark = pytest.mark.django_db

# Unary procedures: a server stream (WatchJobs, FollowJobLogs) answers in frames until the job
# ends or the client leaves; its request limits and authorization are tested with the unary
# ones (test_request_limits.py, the authorization matrices) and its protocol in the streams tests.
PROCEDURES = sorted(name for name, method in registry.methods.items() if not method.server_streaming)
FUZZ = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# Per procedure, so that each one's well-known fields (dateFrom, expiresAt) are reached.
FUZZ_EACH = settings(FUZZ, max_examples=25)

# ---- bodies ---------------------------------------------------------------------------------

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
    st.sampled_from(["ROLE_ADMIN", "ROLE_NOPE", "team-a", "", "\x00", "a\x00b", "2024-01-01T00:00:00Z", "1e999"]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)


strings = st.one_of(
    st.sampled_from(["team-a", "team-a", "ci", "key_x", "10.0.0.5", "ghcr.io", "vault://kv/x", "a\x00b"]),
    st.text(max_size=30),
)
WELL_KNOWN = {
    "google.protobuf.Timestamp": st.sampled_from(["2999-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "0001-13-01"]),
    "google.protobuf.FieldMask": st.sampled_from(["groups", "groups,quotas", "nope", "internal_targets"]),
}
INTEGER_TYPES = {
    FieldDescriptor.TYPE_INT32,
    FieldDescriptor.TYPE_INT64,
    FieldDescriptor.TYPE_UINT32,
    FieldDescriptor.TYPE_UINT64,
    FieldDescriptor.TYPE_SINT32,
    FieldDescriptor.TYPE_SINT64,
}


def well_typed(field):
    """A value of the field's JSON type (the values themselves may still be invalid)."""
    if field.enum_type is not None:
        values = [v.name for v in field.enum_type.values] + [v.number for v in field.enum_type.values]
        return st.sampled_from([*values, 99, -1])
    if field.message_type is not None:
        known = WELL_KNOWN.get(field.message_type.full_name)
        return known if known is not None else message_shaped(field.message_type)
    if field.type in INTEGER_TYPES:
        return st.integers(min_value=-(2**64), max_value=2**64) | st.integers(min_value=0, max_value=70000)
    if field.type == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    return strings


@st.composite
def message_shaped(draw, descriptor):
    """A JSON object using the message's own field names (either spelling), with values of the
    right type (often) or any JSON (sometimes), recursing into message fields."""
    obj = {}
    fields = list(descriptor.fields)
    for field in draw(st.lists(st.sampled_from(fields), max_size=6, unique=True)) if fields else []:
        name = draw(st.sampled_from([field.name, field.json_name]))
        value = well_typed(field)
        if field.is_repeated:
            value = st.lists(value, max_size=3)
        obj[name] = draw(value | json_values if draw(st.integers(0, 3)) == 0 else value)
    return obj


def deep(depth: int) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


def json_bodies(descriptor):
    return st.one_of(
        message_shaped(descriptor).map(lambda o: json.dumps(o).encode()),
        json_values.map(lambda v: json.dumps(v).encode()),
        st.integers(min_value=1, max_value=5000).map(lambda n: b"[" * n),
        st.sampled_from([deep(50), deep(200), deep(3000), b'{"namespace": 1' + b"0" * 400 + b"}"]),
        st.sampled_from([b'{"namespace": "\xff\xfe"}', b"\xc3\x28", b'{"a": "\\ud800"}', b"{\x00}"]),
    )


@st.composite
def bodies(draw, descriptor):
    body = draw(
        st.one_of(
            st.binary(max_size=300),
            json_bodies(descriptor),
            message_shaped(descriptor).map(lambda o: _as_binary(descriptor, o)),
        )
    )
    if draw(st.integers(0, 4)) == 0:
        return draw(st.sampled_from([gzip.compress(body), gzip.compress(body)[:-3], body])), "gzip"
    return body, None


def _as_binary(descriptor, obj) -> bytes:
    """The binary encoding of what the JSON object parses to, or random bytes if it does not parse."""
    from google.protobuf import message_factory

    message = message_factory.GetMessageClass(descriptor)()
    try:
        json_format.ParseDict(obj, message, ignore_unknown_fields=True)
    except Exception:
        return json.dumps(obj).encode()[::-1]
    return message.SerializeToString()


# ---- binary messages, built field by field ------------------------------------------------
# JSON parsing refuses out-of-range well-known types by itself; the binary codec decodes any
# int64 seconds and int32 nanos, so these are built directly, past what ParseDict allows.

INT_BOUNDS = {
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SINT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_INT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SINT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_UINT64: (0, 2**64 - 1),
}
seconds = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.sampled_from([2**62, 253_402_300_799, 253_402_300_800, -62_135_596_800, -62_135_596_801, 0]),
)
nanos = st.one_of(st.integers(min_value=-(2**31), max_value=2**31 - 1), st.sampled_from([-1, 0, 999_999_999, 10**9]))
BINARY_WELL_KNOWN = {
    "google.protobuf.Timestamp": st.fixed_dictionaries({"seconds": seconds, "nanos": nanos}),
    "google.protobuf.Duration": st.fixed_dictionaries({"seconds": seconds, "nanos": nanos}),
    "google.protobuf.FieldMask": st.fixed_dictionaries({"paths": st.lists(strings, max_size=3)}),
}


def long_strings(field):
    """Text near the field's declared limit as often as short text."""
    limit = limits_of(field).max_length or 64
    return strings | st.sampled_from([limit - 1, limit, limit + 1]).map(lambda n: "x" * max(n, 0))


def binary_value(field, depth: int):
    if field.message_type is not None:
        known = BINARY_WELL_KNOWN.get(field.message_type.full_name)
        return known if known is not None else binary_message(field.message_type, depth + 1)
    if field.enum_type is not None:
        return st.integers(min_value=-(2**31), max_value=2**31 - 1)
    if field.type in INT_BOUNDS:
        low, high = INT_BOUNDS[field.type]
        return st.integers(min_value=low, max_value=high)
    if field.type == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if field.type == FieldDescriptor.TYPE_STRING:
        return long_strings(field)
    if field.type == FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=64)
    return st.floats(allow_nan=True)


@st.composite
def binary_message(draw, descriptor, depth: int = 0):
    """A message of the type, as keyword arguments: any field may hold any value of its wire type."""
    values = {}
    fields = list(descriptor.fields) if depth < 4 else []
    for field in draw(st.lists(st.sampled_from(fields), max_size=6, unique=True)) if fields else []:
        if field.containing_oneof is not None and any(
            f.containing_oneof is field.containing_oneof for f in descriptor.fields if f.name in values
        ):
            continue
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            key, value = (field.message_type.fields_by_name[n] for n in ("key", "value"))
            values[field.name] = draw(st.dictionaries(binary_value(key, depth), binary_value(value, depth), max_size=3))
        elif field.is_repeated:
            values[field.name] = draw(st.lists(binary_value(field, depth), max_size=3))
        else:
            values[field.name] = draw(binary_value(field, depth))
    return values


def binary_bodies(path: str):
    request = message_factory.GetMessageClass(registry.methods[path].input_type)
    return binary_message(request.DESCRIPTOR).map(lambda values: request(**values).SerializeToString())


# ---- headers --------------------------------------------------------------------------------

header_text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=20)
content_types = st.one_of(
    st.sampled_from(
        [
            "application/json",
            "application/json; charset=utf-8",
            "application/proto",
            "application/proto; charset=utf-8",
            "application/grpc",
            "text/plain",
            "application/x-www-form-urlencoded",
        ]
    ),
    header_text,
)


def optional(strategy):
    return st.none() | strategy


headers = st.fixed_dictionaries(
    {},
    optional={
        "Content-Encoding": st.sampled_from(["gzip", "identity", "br", "GZIP", ""]) | header_text,
        "Connect-Protocol-Version": st.sampled_from(["1", "2", ""]) | header_text,
        "Connect-Timeout-Ms": st.sampled_from(["10000", "0", "-1", "99999999999", "9999999999"]) | header_text,
        "Accept-Encoding": st.sampled_from(["gzip", "gzip;q=0", "br, gzip"]) | header_text,
    },
)


@st.composite
def requests(draw):
    path = draw(st.sampled_from(PROCEDURES))
    body, encoding = draw(bodies(registry.methods[path].input_type))
    extra = draw(headers)
    if encoding:
        extra.setdefault("Content-Encoding", encoding)
    codec = "application/proto" if draw(st.booleans()) else "application/json"
    return path, body, draw(st.one_of(st.just(codec), content_types)), extra


# ---- the property ---------------------------------------------------------------------------


def check_answer(result, path: str) -> None:
    assert result.status != 500, result
    if result.status == 200:
        response_type = message_factory.GetMessageClass(registry.methods[path].output_type)
        content_type = result.response["Content-Type"]
        if content_type == "application/proto":
            response_type.FromString(result.raw)
        else:
            assert content_type == "application/json", content_type
            json_format.Parse(result.raw, response_type())
        return
    if result.status == 415:  # the runtime's answer to a codec it does not know: no body
        assert result.response["Accept-Post"]
        return
    assert_error_shape(result)
    assert HTTP_STATUS[result.code] == result.status, result


def test_every_procedure_is_fuzzed():
    assert "containers.api.v1.NamespaceService/IssueApiKey" in PROCEDURES
    assert len(PROCEDURES) >= 8


@FUZZ
@given(request=requests())
def test_random_requests_never_break_the_server(rpc, admin_key, request):
    path, body, content_type, extra = request
    result = rpc(path, data=body, content_type=content_type, token=admin_key, headers=extra)
    check_answer(result, path)


@FUZZ
@given(path=st.sampled_from(PROCEDURES), data=st.data())
def test_random_json_bodies_never_break_the_server(rpc, admin_key, path, data):
    body = data.draw(json_bodies(registry.methods[path].input_type))
    check_answer(rpc(path, data=body, token=admin_key), path)


@pytest.mark.parametrize("path", PROCEDURES)
@FUZZ_EACH
@given(data=st.data())
def test_random_binary_messages_never_break_the_server(rpc, admin_key, path, data):
    body = data.draw(binary_bodies(path))
    check_answer(rpc(path, data=body, content_type="application/proto", token=admin_key), path)
