"""json_to_rows.rows_from_json (the fast path) against the reference mapping
(json_format.ParseDict + records.rows_from_record): the same rows, or the same error,
for every record, canonical or not. No database needed."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import orjson
import pytest
from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controlplane.errors import Error
from uploads.api.v1 import uploads_pb2 as pb
from uploads.models import Alias, Integration, MetaUpload, Upload
from uploads.write import json_to_rows, synthetic
from uploads.write.json_to_rows import rows_from_json
from uploads.write.records import rows_from_record
from uploads.write.rows import ALIAS_COLUMNS, INTEGRATION_COLUMNS, META_UPLOAD_COLUMNS, UPLOAD_COLUMNS, Rows

BUCKET = uuid.UUID("00000000-0000-4000-8000-000000000001")
NOW = datetime(2025, 6, 1, 12, tzinfo=UTC)
INTEGRATION_ID = "7f1c2a4e-0000-4000-8000-00000000abcd"


def outcome(mapper, data):
    """Comparable rows (JSON columns parsed: key order is not meaningful), or the error."""
    try:
        rows = mapper(data)
    except Error as exc:
        return ("error", exc.message)
    except (ValueError, json_format.ParseError):
        return ("rejected",)
    return (
        _parsed(rows.upload, UPLOAD_COLUMNS),
        [_parsed(a, ALIAS_COLUMNS) for a in rows.aliases],
        rows.meta_uploads,
        rows.integration,
        rows.metadata_types,
    )


def _parsed(row: tuple, columns: tuple[str, ...]) -> tuple:
    json_columns = {"tags", "intent_metadata", "metadata_kvs", "allowed_user_ids"}
    return tuple(orjson.loads(v) if c in json_columns else v for c, v in zip(columns, row, strict=True))


def fast(data) -> Rows:
    return rows_from_json(data, bucket_id=BUCKET, now=NOW)


def reference(data) -> Rows:
    message = json_format.ParseDict(data, pb.Upload(), ignore_unknown_fields=False)
    return rows_from_record(message, bucket_id=BUCKET, now=NOW)


def test_columns_cover_every_model_field():
    for model, columns in ((Upload, UPLOAD_COLUMNS), (Alias, ALIAS_COLUMNS), (MetaUpload, META_UPLOAD_COLUMNS)):
        expected = {f.attname for f in model._meta.concrete_fields} - {"id"}
        assert set(columns) == expected and len(columns) == len(expected), model
    assert set(INTEGRATION_COLUMNS) == {f.attname for f in Integration._meta.concrete_fields} - {"id", "namespace_id"}


def test_synthetic_records_take_the_fast_path_and_match_the_reference(monkeypatch):
    slow_calls = []
    monkeypatch.setattr(json_to_rows, "rows_from_record", lambda *a, **k: slow_calls.append(1))
    records = list(synthetic.records(400, seed=11))
    fast_rows = [outcome(fast, r) for r in records]
    assert not slow_calls  # every synthetic record is canonical
    monkeypatch.undo()
    assert fast_rows == [outcome(reference, r) for r in records]


# ---- random records: canonical values, other valid spellings, invalid values ------------------

LOOSE = st.shared(st.booleans(), key="loose")  # per record: canonical only, or anything goes


def loose(valid, *odd, wrong_types=True):
    """`valid` in a canonical record; in a loose one, also other spellings and wrong types."""
    odd = (*odd, SCALARS) if wrong_types else odd
    return LOOSE.flatmap(lambda anything: st.one_of(valid, *odd) if anything else valid)


TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=6)
INT32 = st.integers(-(2**31), 2**31 - 1)
SCALARS = st.one_of(TEXT, st.booleans(), INT32, st.floats(allow_nan=False, allow_infinity=False), st.none())
TIMESTAMP = loose(
    st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)).map(
        lambda d: d.isoformat(timespec=("seconds", "milliseconds", "microseconds")[d.microsecond % 3]) + "Z"
    ),
    st.sampled_from(
        [
            "2024-02-29T23:59:59.123456789Z",
            "2024-01-01T10:00:00.5Z",
            "2024-01-01T10:00:00+02:00",
            "2024-13-01T00:00:00Z",
            "2024-01-01 10:00:00Z",
            "",
            "2024-01-01T10:00:60Z",
        ]
    ),
)
INT64 = loose(
    st.integers(-(2**63), 2**63 - 1).map(str),
    st.integers(-(2**63), 2**63 - 1),
    st.sampled_from(["007", "-0", "1e3", "lots", "9223372036854775808", 1.0, 1.5]),
)


def metadata_value(depth: int = 2):
    children = metadata_value(depth - 1) if depth else st.just({})
    return st.fixed_dictionaries(
        {},
        optional={
            "stringValue": loose(TEXT),
            "boolValue": loose(st.booleans()),
            "numberValue": loose(st.one_of(INT32, st.floats(allow_nan=False, allow_infinity=False)), st.just("1.5")),
            "arrayValue": st.lists(children, max_size=2),
            "objectValue": st.dictionaries(TEXT, children, max_size=2),
        },
    )


VALUE_TYPE = loose(
    st.sampled_from(list(pb.MetadataValueType.keys())[1:]),
    st.integers(-1, 6),
    st.just("METADATA_VALUE_TYPE_UNSPECIFIED"),
)
KV = st.fixed_dictionaries(
    {"key": loose(TEXT), "valueType": VALUE_TYPE},
    optional={
        "value": metadata_value(),
        "title": loose(TEXT),
        "iconName": loose(TEXT),
        "hiddenFromUsers": loose(st.booleans()),
    },
)
STRUCT_VALUE = st.recursive(
    loose(st.one_of(TEXT, st.booleans(), st.none()), st.integers(-5, 5), st.floats(-1e3, 1e3)),
    lambda inner: st.one_of(st.lists(inner, max_size=2), st.dictionaries(TEXT, inner, max_size=2)),
    max_leaves=4,
)
STRUCT = st.dictionaries(TEXT, STRUCT_VALUE, max_size=2)
ALIAS = st.fixed_dictionaries(
    {},
    optional={
        "aliasId": loose(st.uuids().map(str)),
        "uploadId": loose(st.sampled_from(["", "rec-1"]), st.just("other")),
        "path": TEXT,
        "slug": loose(TEXT),
        "hasPassword": loose(st.booleans()),
        "expiresAt": TIMESTAMP,
        "maxUses": loose(INT32),
        "useCount": INT32,
        "allowedUserIds": loose(st.lists(TEXT, max_size=2)),
        "createdAt": TIMESTAMP,
        "externalPath": TEXT,
    },
)
META_UPLOAD = st.fixed_dictionaries(
    {},
    optional={
        "type": loose(st.fixed_dictionaries({}, optional={"name": TEXT, "n": loose(INT32), "filename": TEXT})),
        "metadataId": loose(TEXT),
        "uploadUrl": TEXT,
        "downloadUrl": TEXT,
    },
)
INTEGRATION = st.fixed_dictionaries(
    {},
    optional={
        "integrationId": loose(
            st.sampled_from(["", INTEGRATION_ID]), st.sampled_from([INTEGRATION_ID.upper(), str(uuid.UUID(int=5))])
        ),
        "name": loose(TEXT),
        "oauthClientId": TEXT,
        "folderBehavior": loose(st.sampled_from(list(pb.IntegrationFolderBehavior.keys())), st.integers(-1, 5)),
        "folderLinkUrl": TEXT,
        "mode": loose(st.sampled_from(list(pb.IntegrationMode.keys())), st.integers(0, 4)),
        "bucketLauncherEnabled": loose(st.booleans()),
    },
)
RECORD = st.fixed_dictionaries(
    {"uploadId": loose(st.just("rec-1"), st.just("x" * 65), wrong_types=False)},
    optional={
        "path": loose(TEXT),
        "slug": loose(TEXT),
        "sizeBytes": INT64,
        "tags": loose(st.lists(TEXT, max_size=3), st.lists(SCALARS, max_size=2)),
        "integrationId": loose(st.sampled_from(["", INTEGRATION_ID]), st.just("not-a-uuid")),
        "integration": loose(INTEGRATION),
        "private": loose(st.booleans()),
        "createdAt": TIMESTAMP,
        "updatedAt": TIMESTAMP,
        "author": loose(st.fixed_dictionaries({}, optional={"userId": loose(TEXT), "username": TEXT})),
        "lastModifiedBy": st.fixed_dictionaries(
            {}, optional={"userId": TEXT, "username": loose(TEXT, st.just("u" * 257))}
        ),
        "order": loose(INT32, st.integers(2**31, 2**40), st.just("12")),
        "version": INT32,
        "defaultSlugExtension": loose(TEXT, st.just("e" * 65)),
        "intentMetadata": loose(st.dictionaries(TEXT, st.dictionaries(TEXT, STRUCT_VALUE, max_size=2), max_size=2)),
        "metadataKvs": loose(st.lists(KV, max_size=3)),
        "aliases": loose(st.lists(ALIAS, max_size=2)),
        "metaUploads": loose(st.lists(META_UPLOAD, max_size=2)),
    },
)
ODD_NAMES = loose(
    st.just({}),
    st.sampled_from([{"upload_id": "snake-case"}, {"unknownField": 1}, {"private": None}]),
    wrong_types=False,
)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(record=RECORD, odd=ODD_NAMES)
def test_fast_path_equals_the_reference(record, odd):
    record.update(odd)
    aliases = record.get("aliases")
    for i, alias in enumerate(aliases if isinstance(aliases, list) else ()):
        if isinstance(alias, dict) and alias.get("aliasId") in (None, ""):
            alias["aliasId"] = f"a-{i}"  # a missing one is a new uuid4 each time
    assert outcome(fast, record) == outcome(reference, record)


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"uploadId": "u" * 65}, "uploadId: must be at most 64 characters"),
        ({"author": {"userId": "x" * 129}}, "author.userId: must be at most 128 characters"),
        ({"aliases": [{}, {"aliasId": "a" * 65}]}, r"aliases[1].aliasId: must be at most 64 characters"),
        ({"metaUploads": [{"type": {"name": "n" * 129}}]}, "metaUploads[0].type.name: must be at most 128 characters"),
        (
            {"integrationId": INTEGRATION_ID, "integration": {"folderBehavior": 9}},
            "integration.folderBehavior: must be one of the enum's values",
        ),
        (
            {"metadataKvs": [{"key": "k" * 513, "valueType": "METADATA_VALUE_TYPE_ARRAY"}]},
            "metadataKvs[0].key: must be at most 512 characters",
        ),
    ],
)
def test_limits_name_the_field_and_the_limit(fields, message):
    with pytest.raises(Error) as caught:
        fast({"uploadId": "u1", **fields})
    assert caught.value.message == message
