"""A page row (page_query) → the upload record's proto3 JSON object, built directly.

The object equals json_format.MessageToDict(records.record_from_rows(...)) of the same rows:
fields in field-number order, defaults left out, int64 as strings, enums by name,
RFC 3339 timestamps with json_format's 0/3/6 fractional digits, doubles as floats.
tests/test_uploads_records_json.py proves it over random records.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import orjson

from uploads.api.v1 import uploads_pb2 as pb

from .page_query import COLUMN_INDEX as _AT
from .page_query import UPLOAD_COLUMNS

_FOLDER_BEHAVIOR = {v.number: v.name for v in pb.IntegrationFolderBehavior.DESCRIPTOR.values}
_MODE = {v.number: v.name for v in pb.IntegrationMode.DESCRIPTOR.values}
ALIASES, METAS, INTEGRATION = len(UPLOAD_COLUMNS), len(UPLOAD_COLUMNS) + 1, len(UPLOAD_COLUMNS) + 2

# (JSON name, column index) of the plain fields, in field-number order around the others.
_STRINGS_1_5 = [
    ("uploadId", _AT["upload_id"]),
    ("path", _AT["path"]),
    ("slug", _AT["slug"]),
    ("url", _AT["url"]),
    ("contentUrl", _AT["content_url"]),
]
_STRINGS_11_12 = [
    ("defaultSlugExtension", _AT["default_slug_extension"]),
    ("generatedDescription", _AT["generated_description"]),
]
_INTS_20_23 = [
    ("thumbnailGenerationVersion", _AT["thumbnail_generation_version"]),
    ("aiDescriptionGenerationVersion", _AT["ai_description_generation_version"]),
    ("aiTagsGenerationVersion", _AT["ai_tags_generation_version"]),
    ("virusScanGenerationVersion", _AT["virus_scan_generation_version"]),
]
_TAIL_26_33 = [  # (name, index, is a bool: SQLite gives 0/1)
    ("externalPath", _AT["external_path"], False),
    ("order", _AT["order"], False),
    ("isVirtualFile", _AT["is_virtual_file"], True),
    ("integrationHidden", _AT["integration_hidden"], True),
    ("version", _AT["version"], False),
    ("thumbnailContentTypeUrn", _AT["thumbnail_content_type_urn"], False),
    ("thumbnailContentTypeIconName", _AT["thumbnail_content_type_icon_name"], False),
    ("thumbnailContentTypeIconUrl", _AT["thumbnail_content_type_icon_url"], False),
]


def timestamp(value: datetime | str) -> str:
    """google.protobuf.Timestamp's JSON for a stored (microsecond) moment."""
    if isinstance(value, str):  # inside a JSON aggregate, or any SQLite column
        value = datetime.fromisoformat(value)
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    micros = value.microsecond
    text = value.replace(microsecond=0).isoformat()
    if micros == 0:
        return text + "Z"
    if micros % 1000 == 0:
        return f"{text}.{micros // 1000:03d}Z"
    return f"{text}.{micros:06d}Z"


def moment(value: datetime | str) -> datetime:
    """A stored moment as an aware datetime (SQLite hands back text)."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def record(row) -> dict:
    out: dict = {}
    for name, i in _STRINGS_1_5:
        if row[i]:
            out[name] = row[i]
    if row[_AT["size_bytes"]]:
        out["sizeBytes"] = str(row[_AT["size_bytes"]])
    tags = from_json(row[_AT["tags"]])
    if tags:
        out["tags"] = tags
    if row[_AT["integration_id"]]:
        out["integrationId"] = _uuid_text(row[_AT["integration_id"]])
    if row[INTEGRATION] is not None:
        out["integration"] = _integration(from_json(row[INTEGRATION]))
    if row[_AT["allow_any_extension"]]:
        out["allowAnyExtension"] = True
    for name, i in _STRINGS_11_12:
        if row[i]:
            out[name] = row[i]
    metas = from_json(row[METAS])  # NULL (json_agg) or [] (json_group_array) when there are none
    if metas:
        out["metaUploads"] = [_meta_upload(m) for m in metas]
    if row[_AT["private"]]:
        out["private"] = True
    aliases = from_json(row[ALIASES])
    if aliases:
        upload_id = row[_AT["upload_id"]]
        out["aliases"] = [_alias(a, upload_id) for a in aliases]
    out["createdAt"] = timestamp(row[_AT["created_at"]])
    out["updatedAt"] = timestamp(row[_AT["updated_at"]])
    out["author"] = _user(row[_AT["author_user_id"]], row[_AT["author_username"]])
    out["lastModifiedBy"] = _user(row[_AT["last_modified_by_user_id"]], row[_AT["last_modified_by_username"]])
    for name, i in _INTS_20_23:
        if row[i]:
            out[name] = row[i]
    if row[_AT["ai_description_input_ref"]]:
        out["aiDescriptionInputRef"] = row[_AT["ai_description_input_ref"]]
    intent = from_json(row[_AT["intent_metadata"]])
    if intent:
        out["intentMetadata"] = {key: _struct(value) for key, value in intent.items()}
    for name, i, is_bool in _TAIL_26_33:
        if row[i]:
            out[name] = True if is_bool else row[i]
    kvs = from_json(row[_AT["metadata_kvs"]])
    if kvs:
        out["metadataKvs"] = [_kv(kv) for kv in kvs]
    return out


def from_json(value):
    # psycopg decodes json (the aggregates); Django leaves jsonb columns, and SQLite all JSON, as text.
    return orjson.loads(value) if isinstance(value, str | bytes) else value


def _uuid_text(value) -> str:
    if isinstance(value, uuid.UUID):
        return str(value)
    return str(uuid.UUID(value)) if len(value) == 32 else value  # SQLite stores the 32 hex digits


def _user(user_id: str, username: str) -> dict:
    return _present({}, (("userId", user_id), ("username", username)))


def _present(out: dict, pairs) -> dict:
    """`out` with each (name, value) whose value is not the default ("", 0, False, [])."""
    for name, value in pairs:
        if value:
            out[name] = value
    return out


def _integration(row: list) -> dict:
    integration_id, name, oauth_client_id, folder_behavior, folder_link_url, mode, launcher = row
    return _present(
        {},
        (
            ("integrationId", integration_id and _uuid_text(integration_id)),
            ("name", name),
            ("oauthClientId", oauth_client_id),
            ("folderBehavior", folder_behavior and _FOLDER_BEHAVIOR.get(folder_behavior, folder_behavior)),
            ("folderLinkUrl", folder_link_url),
            ("mode", mode and _MODE.get(mode, mode)),
            ("bucketLauncherEnabled", bool(launcher)),
        ),
    )


def _meta_upload(row: list) -> dict:
    type_name, type_n, type_filename, metadata_id, upload_url, download_url = row
    kind = _present({}, (("name", type_name), ("n", type_n), ("filename", type_filename)))
    # `type` is always set on the message (records.record_from_rows), so always present.
    return _present(
        {"type": kind}, (("metadataId", metadata_id), ("uploadUrl", upload_url), ("downloadUrl", download_url))
    )


def _alias(row: list, upload_id: str) -> dict:
    alias_id, path, slug, url, has_password, expires_at, max_uses, use_count, allowed, created_at, external = row
    return _present(
        {},
        (
            ("aliasId", alias_id),
            ("uploadId", upload_id),
            ("path", path),
            ("slug", slug),
            ("url", url),
            ("hasPassword", bool(has_password)),
            ("expiresAt", expires_at and timestamp(expires_at)),
            ("maxUses", max_uses),
            ("useCount", use_count),
            ("allowedUserIds", allowed),
            ("createdAt", created_at and timestamp(created_at)),
            ("externalPath", external),
        ),
    )


def _kv(element: dict) -> dict:
    # Stored in the record's JSON shape (records._kv_json); numbers come back from the
    # database as ints or floats and are doubles in the message.
    out: dict = {"key": element["key"], "valueType": element["valueType"]}
    value = _value(element["value"])
    if value:
        out["value"] = value
    if element.get("title"):
        out["title"] = element["title"]
    if element.get("iconName"):
        out["iconName"] = element["iconName"]
    if element.get("hiddenFromUsers"):
        out["hiddenFromUsers"] = True
    return out


def _value(value: dict) -> dict:
    out: dict = {}
    if "stringValue" in value:
        out["stringValue"] = value["stringValue"]
    if "boolValue" in value:
        out["boolValue"] = value["boolValue"]
    if "numberValue" in value:
        out["numberValue"] = float(value["numberValue"])
    if value.get("arrayValue"):
        out["arrayValue"] = [_value(item) for item in value["arrayValue"]]
    if value.get("objectValue"):
        out["objectValue"] = {key: _value(item) for key, item in value["objectValue"].items()}
    return out


def _struct(value):
    """google.protobuf.Struct/Value JSON: every number a double."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, list):
        return [_struct(item) for item in value]
    return {key: _struct(item) for key, item in value.items()}
