"""rows_to_json (ListUploads' fast path: rows → proto3 JSON without messages) equals
json_format.MessageToDict of the message records.record_from_rows builds from the same rows,
for random records of every field type; and every protocol gets the same response."""

from __future__ import annotations

import json
import urllib.parse
import uuid

import orjson
import pytest
from django.utils import timezone
from google.protobuf import json_format
from google.protobuf.timestamp_pb2 import Timestamp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import grpc_web_frames
from tests.support.uploads_factory import LIST, add, make_bucket
from uploads import selectors
from uploads.api.v1 import uploads_pb2 as pb
from uploads.models import Bucket, Integration, Upload
from uploads.read import page_query, query
from uploads.read.rows_to_json import record
from uploads.write.records import record_from_rows

INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.one_of(st.integers(-(2**63), 2**63 - 1), st.sampled_from([-(2**63), 2**63 - 1, 0, 1, -1]))
# Any Unicode PostgreSQL can store (no NUL) and JSON can carry (no lone surrogates).
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12)
NONEMPTY = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=8)
FLOATS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(-(2**53), 2**53).map(float),  # integers as doubles: 3.0, not 3
)
# 0001-01-01 .. 9999-12-31, and nanos of every shape json_format prints (0, 3, 6, 9 digits).
SECONDS = st.one_of(st.integers(-62135596800, 253402300799), st.integers(1_600_000_000, 1_800_000_000))
NANOS = st.one_of(
    st.just(0),
    st.integers(0, 999).map(lambda ms: ms * 1_000_000),
    st.integers(0, 999_999).map(lambda us: us * 1000),
    st.integers(0, 999_999_999),
)


@st.composite
def timestamps(draw) -> str:
    return Timestamp(seconds=draw(SECONDS), nanos=draw(NANOS)).ToJsonString()


def metadata_values(depth: int = 2):
    scalar = st.one_of(
        st.builds(lambda s: {"stringValue": s}, TEXT),
        st.builds(lambda b: {"boolValue": b}, st.booleans()),
        st.builds(lambda f: {"numberValue": f}, FLOATS),
        st.just({}),
    )
    if depth == 0:
        return scalar
    inner = metadata_values(depth - 1)
    return st.one_of(
        scalar,
        st.builds(lambda items: {"arrayValue": items}, st.lists(inner, max_size=3)),
        st.builds(lambda obj: {"objectValue": obj}, st.dictionaries(TEXT, inner, max_size=3)),
    )


@st.composite
def metadata_kvs(draw) -> dict:
    kind = draw(st.sampled_from(["STRING", "BOOL", "NUMBER", "ARRAY", "OBJECT"]))
    nested = metadata_values(1)
    value = {
        "STRING": st.builds(lambda s: {"stringValue": s}, TEXT),
        "BOOL": st.builds(lambda b: {"boolValue": b}, st.booleans()),
        "NUMBER": st.builds(lambda f: {"numberValue": f}, FLOATS),
        "ARRAY": st.builds(lambda items: {"arrayValue": items} if items else {}, st.lists(nested, max_size=3)),
        "OBJECT": st.builds(lambda obj: {"objectValue": obj} if obj else {}, st.dictionaries(TEXT, nested, max_size=3)),
    }[kind]
    kv = {"key": draw(NONEMPTY), "valueType": f"METADATA_VALUE_TYPE_{kind}", "value": draw(value)}
    for name, strategy in (("title", TEXT), ("iconName", TEXT), ("hiddenFromUsers", st.booleans())):
        if draw(st.booleans()):
            kv[name] = draw(strategy)
    return kv


JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), FLOATS, st.integers(-(2**53), 2**53), TEXT),
    lambda children: st.one_of(st.lists(children, max_size=3), st.dictionaries(TEXT, children, max_size=3)),
    max_leaves=6,
)


@st.composite
def aliases(draw) -> dict:
    alias = {
        "aliasId": str(draw(st.uuids())),
        "path": draw(TEXT),
        "slug": draw(TEXT),
        "url": draw(TEXT),
        "hasPassword": draw(st.booleans()),
        "maxUses": draw(INT32),
        "useCount": draw(INT32),
        "allowedUserIds": draw(st.lists(TEXT, max_size=3)),
        "externalPath": draw(TEXT),
    }
    for name in ("expiresAt", "createdAt"):
        if draw(st.booleans()):
            alias[name] = draw(timestamps())
    return alias


META_UPLOADS = st.fixed_dictionaries(
    {},
    optional={
        "type": st.fixed_dictionaries({}, optional={"name": TEXT, "n": INT32, "filename": TEXT}),
        "metadataId": TEXT,
        "uploadUrl": TEXT,
        "downloadUrl": TEXT,
    },
)
INTEGRATIONS = st.fixed_dictionaries(
    {
        "name": TEXT,
        "oauthClientId": TEXT,
        "folderBehavior": st.sampled_from(pb.IntegrationFolderBehavior.keys()),
        "folderLinkUrl": TEXT,
        "mode": st.sampled_from(pb.IntegrationMode.keys()),
        "bucketLauncherEnabled": st.booleans(),
    }
)
USERS = st.fixed_dictionaries({}, optional={"userId": TEXT, "username": TEXT})


@st.composite
def records(draw, n: int) -> dict:
    r = {
        "uploadId": f"r{n}-" + draw(TEXT),
        "path": draw(TEXT),
        "slug": draw(TEXT),
        "url": draw(TEXT),
        "contentUrl": draw(TEXT),
        "sizeBytes": str(draw(INT64)),
        "tags": draw(st.lists(TEXT, max_size=3)),
        "allowAnyExtension": draw(st.booleans()),
        "defaultSlugExtension": draw(TEXT),
        "generatedDescription": draw(TEXT),
        "metaUploads": draw(st.lists(META_UPLOADS, max_size=2)),
        "private": draw(st.booleans()),
        "aliases": draw(st.lists(aliases(), max_size=2)),
        "createdAt": draw(timestamps()),
        "author": draw(USERS),
        "lastModifiedBy": draw(USERS),
        "thumbnailGenerationVersion": draw(INT32),
        "aiDescriptionGenerationVersion": draw(INT32),
        "aiTagsGenerationVersion": draw(INT32),
        "virusScanGenerationVersion": draw(INT32),
        "aiDescriptionInputRef": draw(TEXT),
        "intentMetadata": draw(st.dictionaries(TEXT, st.dictionaries(TEXT, JSON_VALUES, max_size=3), max_size=2)),
        "externalPath": draw(TEXT),
        "order": draw(INT32),
        "isVirtualFile": draw(st.booleans()),
        "integrationHidden": draw(st.booleans()),
        "version": draw(INT32),
        "thumbnailContentTypeUrn": draw(TEXT),
        "thumbnailContentTypeIconName": draw(TEXT),
        "thumbnailContentTypeIconUrl": draw(TEXT),
        "metadataKvs": draw(st.lists(metadata_kvs(), max_size=3)),
    }
    if draw(st.booleans()):
        r["updatedAt"] = draw(timestamps())
    if draw(st.booleans()):
        r["integrationId"] = str(draw(st.uuids()))
        if draw(st.booleans()):
            r["integration"] = {"integrationId": r["integrationId"], **draw(INTEGRATIONS)}
    return r


def through_json_format(bucket: Bucket) -> list[dict]:
    """The reference: ORM rows → record_from_rows → json_format.MessageToDict, newest first."""
    out = []
    for upload in Upload.objects.filter(bucket=bucket).order_by("-created_at", "-upload_id"):
        integration = Integration.objects.filter(
            namespace_id=bucket.namespace_id, integration_id=upload.integration_id
        ).first()
        message = record_from_rows(
            upload,
            integration,
            list(upload.aliases.order_by("position")),
            list(upload.meta_uploads.order_by("position")),
        )
        out.append(json_format.MessageToDict(message))
    return out


def through_fast_path(bucket: Bucket) -> list[dict]:
    request = pb.ListUploadsRequest(page_size=1000)
    page = page_query.fetch_page(
        bucket=selectors.bucket_scope(bucket_id=str(bucket.pk)),
        namespaces=None,
        query=query.parse(request),
        position=None,
        anchor=timezone.now(),
    )
    return [record(row) for row in page.rows]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fast_path_equals_json_format(namespace, data):
    Bucket.objects.filter(name="fast").delete()
    bucket = make_bucket(name="fast")
    add(bucket, [data.draw(records(n)) for n in range(data.draw(st.integers(1, 3)))])
    expected, fast = through_json_format(bucket), through_fast_path(bucket)
    assert fast == expected
    # Also byte for byte (modulo key order): 3.0 stays a float, int64 a string, and so on.
    assert orjson.dumps(fast, option=orjson.OPT_SORT_KEYS) == orjson.dumps(expected, option=orjson.OPT_SORT_KEYS)


# ---- every protocol gets the fast bytes or a correct message --------------------------------


@pytest.fixture
def rich_bucket(namespace):
    bucket = make_bucket(name="rich")
    integration_id = str(uuid.UUID(int=7))
    add(
        bucket,
        [
            {
                "uploadId": "é-1",
                "slug": "Ünïcode ✓",
                "sizeBytes": str(2**63 - 1),
                "tags": ["a", "b"],
                "integrationId": integration_id,
                "integration": {"integrationId": integration_id, "name": "Drive", "mode": "INTEGRATION_MODE_SYNC"},
                "createdAt": "2024-01-01T00:00:00.123456789Z",
                "aliases": [{"aliasId": "al-1", "createdAt": "2024-01-02T00:00:00Z", "allowedUserIds": ["u1"]}],
                "metaUploads": [{"type": {"name": "thumbnail", "n": 1}, "metadataId": "m1"}],
                "intentMetadata": {"share": {"n": 3, "list": [1, "x", None, {"deep": True}]}},
                "metadataKvs": [
                    {"key": "pages", "valueType": "METADATA_VALUE_TYPE_NUMBER", "value": {"numberValue": 3}},
                    {
                        "key": "exif",
                        "valueType": "METADATA_VALUE_TYPE_OBJECT",
                        "value": {
                            "objectValue": {"w": {"numberValue": 640}, "l": {"arrayValue": [{"boolValue": False}]}}
                        },
                    },
                ],
            },
            {"uploadId": "plain", "createdAt": "2023-06-01T12:00:00.500Z"},
        ],
    )
    return bucket


def test_every_protocol_and_codec_answers_the_same_message(rpc, client, make_key, rich_bucket):
    token = make_key()
    request = pb.ListUploadsRequest(bucket=pb.BucketRef(bucket_id=str(rich_bucket.pk)), page_size=1)
    request_json = json_format.MessageToJson(request)
    expected = json_format.ParseDict({"uploads": through_json_format(rich_bucket)[:1]}, pb.ListUploadsResponse())
    auth = {"HTTP_AUTHORIZATION": f"Bearer {token}"}

    def check(message: pb.ListUploadsResponse):
        assert message.uploads == expected.uploads and message.next_cursor

    posted = rpc(LIST, json.loads(request_json), token=token)
    assert posted.status == 200 and posted.response["Content-Type"] == "application/json"
    assert {k: v for k, v in posted.body.items() if k != "nextCursor"} == json_format.MessageToDict(expected)
    check(json_format.ParseDict(posted.body, pb.ListUploadsResponse()))

    query_string = urllib.parse.urlencode({"encoding": "json", "message": request_json, "connect": "v1"})
    got = rpc(LIST, method="GET", query=query_string, token=token)
    assert got.status == 200
    check(json_format.ParseDict(got.body, pb.ListUploadsResponse()))

    binary = rpc(LIST, data=request.SerializeToString(), content_type="application/proto", token=token)
    assert binary.status == 200 and binary.response["Content-Type"] == "application/proto"
    check(pb.ListUploadsResponse.FromString(binary.response.content))

    for codec, encode, decode in (
        ("proto", request.SerializeToString, pb.ListUploadsResponse.FromString),
        ("json", request_json.encode, lambda b: json_format.Parse(b, pb.ListUploadsResponse())),
    ):
        body = encode()
        framed = b"\x00" + len(body).to_bytes(4, "big") + body
        response = client.post("/" + LIST, framed, content_type=f"application/grpc-web+{codec}", **auth)
        (message,), trailers = grpc_web_frames(response.content)
        assert response.status_code == 200 and trailers.get("grpc-status") == "0", (codec, trailers)
        check(decode(message))


def test_the_fast_json_is_the_json_formats_bytes_modulo_key_order(rpc, make_key, rich_bucket):
    result = rpc(LIST, {"bucket": {"bucketId": str(rich_bucket.pk)}}, token=make_key())
    sent = orjson.loads(result.response.content)
    assert orjson.dumps(sent, option=orjson.OPT_SORT_KEYS) == orjson.dumps(
        {"uploads": through_json_format(rich_bucket)}, option=orjson.OPT_SORT_KEYS
    )
