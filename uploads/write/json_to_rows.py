"""A record's JSON shape (a dict, as orjson parses it) → rows, fast.

`json_format.ParseDict` into a proto message and `rows_from_record` cost ~150 µs a record,
most of seeding or importing a million. Records are nearly always in the canonical shape
ListUploads (and synthetic.py) writes: camelCase names, exact JSON types, RFC 3339 'Z'
timestamps. For those, `_fast` maps the dict straight to rows. Anything else, including
every invalid record, goes the reference way, which also writes the error message, so both
paths accept, refuse and store exactly the same (tests/test_uploads_record_json.py).
"""

from __future__ import annotations

import math
import re
import uuid
from datetime import datetime

from google.protobuf import json_format

from uploads.api.v1 import uploads_pb2 as pb

from .records import TYPE_NAME, VALUE_FIELD, rows_from_record
from .rows import Rows, checked, json_text

INT32 = range(-(2**31), 2**31)
INT64 = range(-(2**63), 2**63)
INT64_TEXT = re.compile(r"-?(?:0|[1-9][0-9]{0,18})")
TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{3}|\.[0-9]{6})?Z")
VALUE_TYPES = {TYPE_NAME[n]: n for n in VALUE_FIELD} | {n: n for n in VALUE_FIELD}
FOLDER_BEHAVIORS = {v.name: v.number for v in pb.IntegrationFolderBehavior.DESCRIPTOR.values} | {
    v.number: v.number for v in pb.IntegrationFolderBehavior.DESCRIPTOR.values
}
MODES = {v.name: v.number for v in pb.IntegrationMode.DESCRIPTOR.values} | {
    v.number: v.number for v in pb.IntegrationMode.DESCRIPTOR.values
}
SCALAR_VALUES = ("stringValue", "boolValue", "numberValue")


class _Slow(Exception):
    """Not the canonical shape: let the reference path decide."""


def rows_from_json(data, *, bucket_id, now: datetime) -> Rows:
    """Validates one record in its JSON shape and maps it to rows; raises Error or ParseError."""
    if type(data) is dict:
        try:
            return checked(_fast(data, bucket_id, now))
        except _Slow:
            pass
    message = json_format.ParseDict(data, pb.Upload(), ignore_unknown_fields=False)
    return rows_from_record(message, bucket_id=bucket_id, now=now)


# ---- scalars: the exact JSON type, or _Slow --------------------------------------------------


def _str(value) -> str:
    if type(value) is str:
        return value
    raise _Slow


def _bool(value) -> bool:
    if value is True or value is False:
        return value
    raise _Slow


def _int32(value) -> int:
    if type(value) is int and value in INT32:
        return value
    raise _Slow


def _int64(value) -> int:
    if type(value) is str and INT64_TEXT.fullmatch(value):
        value = int(value)
    if type(value) is int and value in INT64:
        return value
    raise _Slow


def _strings(value) -> list[str]:
    if type(value) is list and all(type(item) is str for item in value):
        return value
    raise _Slow


def _timestamp(value) -> datetime:
    # Whole seconds, milliseconds or microseconds, 'Z': what fromisoformat reads exactly as
    # Timestamp.FromJsonString and query.timestamp_field do. Other precisions take the reference path.
    if type(value) is not str or TIMESTAMP.fullmatch(value) is None:
        raise _Slow
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise _Slow from None


def _dict(value, fields) -> dict:
    if type(value) is dict and fields.issuperset(value):
        return value
    raise _Slow


def _enum(value, known: dict) -> int:
    if type(value) in (str, int) and value in known:
        return known[value]
    raise _Slow


def _uuid(value) -> uuid.UUID:
    try:
        return uuid.UUID(_str(value))
    except ValueError:
        raise _Slow from None


# ---- the record -------------------------------------------------------------------------------

UPLOAD_FIELDS = frozenset(
    {
        "uploadId",
        "path",
        "slug",
        "url",
        "contentUrl",
        "sizeBytes",
        "tags",
        "integrationId",
        "integration",
        "allowAnyExtension",
        "defaultSlugExtension",
        "generatedDescription",
        "metaUploads",
        "private",
        "aliases",
        "createdAt",
        "updatedAt",
        "author",
        "lastModifiedBy",
        "thumbnailGenerationVersion",
        "aiDescriptionGenerationVersion",
        "aiTagsGenerationVersion",
        "virusScanGenerationVersion",
        "aiDescriptionInputRef",
        "intentMetadata",
        "externalPath",
        "order",
        "isVirtualFile",
        "integrationHidden",
        "version",
        "thumbnailContentTypeUrn",
        "thumbnailContentTypeIconName",
        "thumbnailContentTypeIconUrl",
        "metadataKvs",
    }
)
USER_FIELDS = frozenset({"userId", "username"})
EMPTY: dict = {}


def _fast(data: dict, bucket_id, now: datetime) -> Rows:
    if not UPLOAD_FIELDS.issuperset(data):
        raise _Slow
    get = data.get
    upload_id = _str(get("uploadId", "")) or str(uuid.uuid4())
    created_at = _timestamp(data["createdAt"]) if "createdAt" in data else now
    updated_at = _timestamp(data["updatedAt"]) if "updatedAt" in data else created_at
    integration_id = _uuid(data["integrationId"]) if get("integrationId") else None
    if "integrationId" in data:
        _str(data["integrationId"])
    slug = _str(get("slug", ""))
    author = _dict(get("author", EMPTY), USER_FIELDS)
    editor = _dict(get("lastModifiedBy", EMPTY), USER_FIELDS)
    kvs, metadata_types = _metadata_kvs(get("metadataKvs", ()))
    upload = (
        upload_id,
        bucket_id,
        _str(get("path", "")),
        slug,
        slug.lower(),
        _str(get("url", "")),
        _str(get("contentUrl", "")),
        _int64(get("sizeBytes", 0)),
        json_text(_strings(get("tags", []))),
        integration_id,
        _bool(get("allowAnyExtension", False)),
        _str(get("defaultSlugExtension", "")),
        _str(get("generatedDescription", "")),
        _bool(get("private", False)),
        created_at,
        updated_at,
        _str(author.get("userId", "")),
        _str(author.get("username", "")),
        _str(editor.get("userId", "")),
        _str(editor.get("username", "")),
        _int32(get("thumbnailGenerationVersion", 0)),
        _int32(get("aiDescriptionGenerationVersion", 0)),
        _int32(get("aiTagsGenerationVersion", 0)),
        _int32(get("virusScanGenerationVersion", 0)),
        _str(get("aiDescriptionInputRef", "")),
        json_text(_intent_metadata(get("intentMetadata", EMPTY))),
        _str(get("externalPath", "")),
        _int32(get("order", 0)),
        _bool(get("isVirtualFile", False)),
        _bool(get("integrationHidden", False)),
        _int32(get("version", 0)),
        _str(get("thumbnailContentTypeUrn", "")),
        _str(get("thumbnailContentTypeIconName", "")),
        _str(get("thumbnailContentTypeIconUrl", "")),
        json_text(kvs),
    )
    aliases = [_alias(alias, i, upload_id) for i, alias in enumerate(_list(get("aliases", ())))]
    metas = [_meta_upload(meta, i, upload_id) for i, meta in enumerate(_list(get("metaUploads", ())))]
    integration = _integration(data["integration"], integration_id) if "integration" in data else None
    return Rows(upload, aliases, metas, integration, metadata_types)


def _list(value) -> list | tuple:
    if type(value) in (list, tuple):
        return value
    raise _Slow


ALIAS_FIELDS = frozenset(
    {
        "aliasId",
        "uploadId",
        "path",
        "slug",
        "url",
        "hasPassword",
        "expiresAt",
        "maxUses",
        "useCount",
        "allowedUserIds",
        "createdAt",
        "externalPath",
    }
)


def _alias(alias, position: int, upload_id: str) -> tuple:
    get = _dict(alias, ALIAS_FIELDS).get
    if _str(get("uploadId", "")) not in ("", upload_id):
        raise _Slow  # the reference path names the field
    return (
        _str(get("aliasId", "")) or str(uuid.uuid4()),
        upload_id,
        position,
        _str(get("path", "")),
        _str(get("slug", "")),
        _str(get("url", "")),
        _bool(get("hasPassword", False)),
        _timestamp(alias["expiresAt"]) if "expiresAt" in alias else None,
        _int32(get("maxUses", 0)),
        _int32(get("useCount", 0)),
        json_text(_strings(get("allowedUserIds", []))),
        _timestamp(alias["createdAt"]) if "createdAt" in alias else None,
        _str(get("externalPath", "")),
    )


META_UPLOAD_FIELDS = frozenset({"type", "metadataId", "uploadUrl", "downloadUrl"})
META_UPLOAD_TYPE_FIELDS = frozenset({"name", "n", "filename"})


def _meta_upload(meta, position: int, upload_id: str) -> tuple:
    get = _dict(meta, META_UPLOAD_FIELDS).get
    kind = _dict(get("type", EMPTY), META_UPLOAD_TYPE_FIELDS)
    return (
        upload_id,
        position,
        _str(kind.get("name", "")),
        _int32(kind.get("n", 0)),
        _str(kind.get("filename", "")),
        _str(get("metadataId", "")),
        _str(get("uploadUrl", "")),
        _str(get("downloadUrl", "")),
    )


INTEGRATION_FIELDS = frozenset(
    {"integrationId", "name", "oauthClientId", "folderBehavior", "folderLinkUrl", "mode", "bucketLauncherEnabled"}
)


def _integration(given, integration_id: uuid.UUID | None) -> tuple:
    get = _dict(given, INTEGRATION_FIELDS).get
    if integration_id is None or (get("integrationId") and _uuid(given["integrationId"]) != integration_id):
        raise _Slow  # the reference path names the field
    _str(get("integrationId", ""))
    return (
        integration_id,
        _str(get("name", "")),
        _str(get("oauthClientId", "")),
        _enum(get("folderBehavior", 0), FOLDER_BEHAVIORS),
        _str(get("folderLinkUrl", "")),
        _enum(get("mode", 0), MODES),
        _bool(get("bucketLauncherEnabled", False)),
    )


# ---- JSON-valued fields -----------------------------------------------------------------------


def _intent_metadata(value) -> dict:
    """map<string, Struct>: kept as given when it holds no numbers (a Struct turns every
    number into a double, which the reference path writes as such)."""
    if type(value) is not dict or not all(type(v) is dict and _plain(v) for v in value.values()):
        raise _Slow
    return value


def _plain(value) -> bool:
    kind = type(value)
    if kind is dict:
        return all(_plain(v) for v in value.values())
    if kind is list:
        return all(_plain(v) for v in value)
    return kind is str or kind is bool or value is None


KV_FIELDS = frozenset({"key", "valueType", "value", "title", "iconName", "hiddenFromUsers"})
VALUE_FIELDS = frozenset({"stringValue", "boolValue", "numberValue", "arrayValue", "objectValue"})
JSON_VALUE_FIELD = {
    n: "".join(w.capitalize() if i else w for i, w in enumerate(name.split("_"))) for n, name in VALUE_FIELD.items()
}


def _metadata_kvs(kvs) -> tuple[list[dict], list[tuple[str, int]]]:
    elements, types = [], []
    for kv in _list(kvs):
        get = _dict(kv, KV_FIELDS).get
        key = _str(get("key", ""))
        value_type = _enum(get("valueType", 0), VALUE_TYPES)
        value = _value(get("value", EMPTY))
        wanted = JSON_VALUE_FIELD[value_type]
        if not key or any(name != wanted for name in value) or (wanted in SCALAR_VALUES and not value):
            raise _Slow  # the reference path names the field and the rule
        element = {"key": key, "valueType": TYPE_NAME[value_type], "value": value}
        title, icon, hidden = _str(get("title", "")), _str(get("iconName", "")), _bool(get("hiddenFromUsers", False))
        if title:
            element["title"] = title
        if icon:
            element["iconName"] = icon
        if hidden:
            element["hiddenFromUsers"] = True
        elements.append(element)
        types.append((key, value_type))
    return elements, types


def _value(value) -> dict:
    """A MetadataValue as records._value_json writes it: fields in that order, numbers as
    doubles, empty lists and maps left out."""
    get = _dict(value, VALUE_FIELDS).get
    out: dict = {}
    if "stringValue" in value:
        out["stringValue"] = _str(value["stringValue"])
    if "boolValue" in value:
        out["boolValue"] = _bool(value["boolValue"])
    if "numberValue" in value:
        number = value["numberValue"]
        if type(number) not in (int, float) or not math.isfinite(number):
            raise _Slow
        out["numberValue"] = float(number)
    items = _list(get("arrayValue", ()))
    if items:
        out["arrayValue"] = [_value(item) for item in items]
    members = get("objectValue", EMPTY)
    if type(members) is not dict:
        raise _Slow
    if members:
        out["objectValue"] = {k: _value(v) for k, v in members.items()}
    return out
