"""A page row (page_query) → the upload record's proto3 JSON object, built directly.

The object equals json_format.MessageToDict(write.records.record_from_rows(...)) of the same rows:
fields in field-number order, defaults left out, int64 as strings, enums by name,
RFC 3339 timestamps with json_format's 0/3/6 fractional digits, doubles as floats.
tests/test_uploads_records_json.py proves it over random records.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import orjson

from controlplane import protojson
from uploads.api.v1 import uploads_pb2 as pb

_FOLDER_BEHAVIOR = protojson.enum_names(pb.IntegrationFolderBehavior.DESCRIPTOR)
_MODE = protojson.enum_names(pb.IntegrationMode.DESCRIPTOR)


def timestamp(value: datetime | str) -> str:
    """google.protobuf.Timestamp's JSON for a stored (microsecond) moment."""
    if isinstance(value, str):
        if len(value) == 26 and value[10] == "T":  # UTC as page_query has PostgreSQL write it
            fraction = value[20:]
            if fraction == "000000":
                return value[:19] + "Z"
            return value[:23] + "Z" if fraction.endswith("000") else value + "Z"
        value = datetime.fromisoformat(value)  # SQLite's text
    return protojson.timestamp(value)


def moment(value: datetime | str) -> datetime:
    """A stored moment as an aware datetime (SQLite hands back text)."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def record(row) -> dict:
    # One unpacking into locals (page_query.UPLOAD_COLUMNS order, then the three aggregates):
    # several times cheaper than indexing the row field by field.
    (
        upload_id, path, slug, url, content_url, size_bytes, tags, integration_id, allow_any_extension,
        default_slug_extension, generated_description, private, created_at, updated_at, author_user_id,
        author_username, last_modified_by_user_id, last_modified_by_username, thumbnail_generation_version,
        ai_description_generation_version, ai_tags_generation_version, virus_scan_generation_version,
        ai_description_input_ref, intent_metadata, external_path, order, is_virtual_file, integration_hidden,
        version, thumbnail_content_type_urn, thumbnail_content_type_icon_name, thumbnail_content_type_icon_url,
        metadata_kvs, aliases, metas, integration,
    ) = row  # fmt: skip
    out: dict = {}
    if upload_id:
        out["uploadId"] = upload_id
    if path:
        out["path"] = path
    if slug:
        out["slug"] = slug
    if url:
        out["url"] = url
    if content_url:
        out["contentUrl"] = content_url
    if size_bytes:
        out["sizeBytes"] = str(size_bytes)
    tags = from_json(tags)
    if tags:
        out["tags"] = tags
    if integration_id:
        out["integrationId"] = _uuid_text(integration_id)
    if integration is not None:
        out["integration"] = _integration(from_json(integration))
    if allow_any_extension:
        out["allowAnyExtension"] = True
    if default_slug_extension:
        out["defaultSlugExtension"] = default_slug_extension
    if generated_description:
        out["generatedDescription"] = generated_description
    metas = from_json(metas)  # NULL (json_agg) or [] (json_group_array) when there are none
    if metas:
        out["metaUploads"] = [_meta_upload(m) for m in metas]
    if private:
        out["private"] = True
    aliases = from_json(aliases)
    if aliases:
        out["aliases"] = [_alias(a, upload_id) for a in aliases]
    out["createdAt"] = timestamp(created_at)
    out["updatedAt"] = timestamp(updated_at)
    out["author"] = _user(author_user_id, author_username)
    out["lastModifiedBy"] = _user(last_modified_by_user_id, last_modified_by_username)
    if thumbnail_generation_version:
        out["thumbnailGenerationVersion"] = thumbnail_generation_version
    if ai_description_generation_version:
        out["aiDescriptionGenerationVersion"] = ai_description_generation_version
    if ai_tags_generation_version:
        out["aiTagsGenerationVersion"] = ai_tags_generation_version
    if virus_scan_generation_version:
        out["virusScanGenerationVersion"] = virus_scan_generation_version
    if ai_description_input_ref:
        out["aiDescriptionInputRef"] = ai_description_input_ref
    intent = from_json(intent_metadata)
    if intent:
        out["intentMetadata"] = {key: _struct(value) for key, value in intent.items()}
    if external_path:
        out["externalPath"] = external_path
    if order:
        out["order"] = order
    if is_virtual_file:
        out["isVirtualFile"] = True
    if integration_hidden:
        out["integrationHidden"] = True
    if version:
        out["version"] = version
    if thumbnail_content_type_urn:
        out["thumbnailContentTypeUrn"] = thumbnail_content_type_urn
    if thumbnail_content_type_icon_name:
        out["thumbnailContentTypeIconName"] = thumbnail_content_type_icon_name
    if thumbnail_content_type_icon_url:
        out["thumbnailContentTypeIconUrl"] = thumbnail_content_type_icon_url
    kvs = from_json(metadata_kvs)
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
