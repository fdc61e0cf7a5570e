"""The upload record (proto `Upload`, or its proto3 JSON) ⇄ model rows.

Used by import_uploads and seed_uploads; record_from_rows is the reference that ListUploads'
fast path (read/rows_to_json) is proven equal to, through json_format (the import round trip).
"""

from __future__ import annotations

import math
import uuid
from datetime import UTC, datetime

from google.protobuf import json_format

from controlplane.errors import Error
from uploads.api.v1 import uploads_pb2 as pb

from ..models import Alias, Integration, MetaUpload, Upload
from .rows import Rows, checked, json_text

VALUE_FIELD = {
    pb.METADATA_VALUE_TYPE_STRING: "string_value",
    pb.METADATA_VALUE_TYPE_BOOL: "bool_value",
    pb.METADATA_VALUE_TYPE_NUMBER: "number_value",
    pb.METADATA_VALUE_TYPE_ARRAY: "array_value",
    pb.METADATA_VALUE_TYPE_OBJECT: "object_value",
}
TYPE_NAME = {number: pb.MetadataValueType.Name(number) for number in VALUE_FIELD}


# ---- record → rows -------------------------------------------------------------------------


def rows_from_record(record: pb.Upload, *, bucket_id, now: datetime) -> Rows:
    """Validates a record and maps it to rows (uploads/write/rows.py). Errors name the JSON field.

    The reference mapping: json_to_rows.rows_from_json takes a faster path for the JSON
    shape and must produce exactly what this does (tests/test_uploads_record_json.py).
    """
    upload_id = record.upload_id or str(uuid.uuid4())
    created_at = timestamp_field(record, "created_at") or now
    integration_id = _uuid(record.integration_id, "integrationId") if record.integration_id else None
    kvs = [_kv_json(kv, i) for i, kv in enumerate(record.metadata_kvs)]
    upload = (
        upload_id,
        bucket_id,
        record.path,
        record.slug,
        record.slug.lower(),
        record.url,
        record.content_url,
        record.size_bytes,
        json_text(list(record.tags)),
        integration_id,
        record.allow_any_extension,
        record.default_slug_extension,
        record.generated_description,
        getattr(record, "private"),  # noqa: B009 (a keyword-like name)
        created_at,
        timestamp_field(record, "updated_at") or created_at,
        record.author.user_id,
        record.author.username,
        record.last_modified_by.user_id,
        record.last_modified_by.username,
        record.thumbnail_generation_version,
        record.ai_description_generation_version,
        record.ai_tags_generation_version,
        record.virus_scan_generation_version,
        record.ai_description_input_ref,
        json_text({k: json_format.MessageToDict(v) for k, v in record.intent_metadata.items()}),
        record.external_path,
        record.order,
        record.is_virtual_file,
        record.integration_hidden,
        record.version,
        record.thumbnail_content_type_urn,
        record.thumbnail_content_type_icon_name,
        record.thumbnail_content_type_icon_url,
        json_text(kvs),
    )
    aliases = []
    for i, alias in enumerate(record.aliases):
        if alias.upload_id and alias.upload_id != upload_id:
            raise Error.invalid_argument(f"aliases[{i}].uploadId", "must be the uploadId of the record")
        aliases.append(
            (
                alias.alias_id or str(uuid.uuid4()),
                upload_id,
                i,
                alias.path,
                alias.slug,
                alias.url,
                alias.has_password,
                timestamp_field(alias, "expires_at"),
                alias.max_uses,
                alias.use_count,
                json_text(list(alias.allowed_user_ids)),
                timestamp_field(alias, "created_at"),
                alias.external_path,
            )
        )
    meta_uploads = [
        (
            upload_id,
            i,
            meta.type.name,
            meta.type.n,
            meta.type.filename,
            meta.metadata_id,
            meta.upload_url,
            meta.download_url,
        )
        for i, meta in enumerate(record.meta_uploads)
    ]
    integration = None
    if record.HasField("integration"):
        given = record.integration
        if given.integration_id and _uuid(given.integration_id, "integration.integrationId") != integration_id:
            raise Error.invalid_argument("integration.integrationId", "must equal integrationId")
        if integration_id is None:
            raise Error.invalid_argument("integrationId", "is required when integration is given")
        integration = (
            integration_id,
            given.name,
            given.oauth_client_id,
            given.folder_behavior,
            given.folder_link_url,
            given.mode,
            given.bucket_launcher_enabled,
        )
    metadata_types = [(kv.key, kv.value_type) for kv in record.metadata_kvs]
    return checked(Rows(upload, aliases, meta_uploads, integration, metadata_types))


def _kv_json(kv: pb.MetadataKv, index: int) -> dict:
    field_name = VALUE_FIELD.get(kv.value_type)
    if field_name is None:
        raise Error.invalid_argument(f"metadataKvs[{index}].valueType", "must be STRING, BOOL, NUMBER, ARRAY or OBJECT")
    if not kv.key:
        raise Error.invalid_argument(f"metadataKvs[{index}].key", "is required")
    present = {f.name for f, _ in kv.value.ListFields()}
    if present - {field_name} or (field_name in ("string_value", "bool_value", "number_value") and not present):
        raise Error.invalid_argument(f"metadataKvs[{index}].value", f"must hold only {field_name} for {kv.key!r}")
    # The element's proto3 JSON: the shape stored, filtered (@> / json_each) and returned.
    element = {"key": kv.key, "valueType": TYPE_NAME[kv.value_type], "value": _value_json(kv.value, index)}
    if kv.title:
        element["title"] = kv.title
    if kv.icon_name:
        element["iconName"] = kv.icon_name
    if kv.hidden_from_users:
        element["hiddenFromUsers"] = True
    return element


def _value_json(value: pb.MetadataValue, index: int) -> dict:
    # Hand-written rather than json_format.MessageToDict: seeding converts millions of these.
    out: dict = {}
    if value.HasField("string_value"):
        out["stringValue"] = value.string_value
    if value.HasField("bool_value"):
        out["boolValue"] = value.bool_value
    if value.HasField("number_value"):
        if not math.isfinite(value.number_value):
            raise Error.invalid_argument(f"metadataKvs[{index}].value", "numberValue must be finite")
        out["numberValue"] = value.number_value
    if len(value.array_value):
        out["arrayValue"] = [_value_json(v, index) for v in value.array_value]
    if len(value.object_value):
        out["objectValue"] = {k: _value_json(v, index) for k, v in value.object_value.items()}
    return out


def _uuid(text: str, field_name: str) -> uuid.UUID:
    try:
        return uuid.UUID(text)
    except ValueError:
        raise Error.invalid_argument(field_name, "must be a UUID") from None


# ---- rows → record -------------------------------------------------------------------------


def record_from_rows(
    upload: Upload, integration: Integration | None, aliases: list[Alias] = (), meta_uploads: list[MetaUpload] = ()
) -> pb.Upload:
    """The record of `upload`, whose children the caller fetched in bulk (see selectors.list_uploads)."""
    record = pb.Upload(
        upload_id=upload.upload_id,
        path=upload.path,
        slug=upload.slug,
        url=upload.url,
        content_url=upload.content_url,
        size_bytes=upload.size_bytes,
        tags=upload.tags,
        integration_id=str(upload.integration_id) if upload.integration_id else "",
        allow_any_extension=upload.allow_any_extension,
        default_slug_extension=upload.default_slug_extension,
        generated_description=upload.generated_description,
        author=pb.UserRef(user_id=upload.author_user_id, username=upload.author_username),
        last_modified_by=pb.UserRef(user_id=upload.last_modified_by_user_id, username=upload.last_modified_by_username),
        thumbnail_generation_version=upload.thumbnail_generation_version,
        ai_description_generation_version=upload.ai_description_generation_version,
        ai_tags_generation_version=upload.ai_tags_generation_version,
        virus_scan_generation_version=upload.virus_scan_generation_version,
        ai_description_input_ref=upload.ai_description_input_ref,
        external_path=upload.external_path,
        order=upload.order,
        is_virtual_file=upload.is_virtual_file,
        integration_hidden=upload.integration_hidden,
        version=upload.version,
        thumbnail_content_type_urn=upload.thumbnail_content_type_urn,
        thumbnail_content_type_icon_name=upload.thumbnail_content_type_icon_name,
        thumbnail_content_type_icon_url=upload.thumbnail_content_type_icon_url,
    )
    setattr(record, "private", upload.private)  # noqa: B010 (a keyword-like name)
    record.created_at.FromDatetime(upload.created_at)
    record.updated_at.FromDatetime(upload.updated_at)
    if upload.intent_metadata:
        json_format.ParseDict({"intentMetadata": upload.intent_metadata}, record)
    for element in upload.metadata_kvs:
        kv = record.metadata_kvs.add(
            key=element["key"],
            value_type=pb.MetadataValueType.Value(element["valueType"]),
            title=element.get("title", ""),
            icon_name=element.get("iconName", ""),
            hidden_from_users=element.get("hiddenFromUsers", False),
        )
        _fill_value(kv.value, element["value"])
    if integration is not None:
        record.integration.CopyFrom(
            pb.Integration(
                integration_id=str(integration.integration_id),
                name=integration.name,
                oauth_client_id=integration.oauth_client_id,
                folder_behavior=integration.folder_behavior,
                folder_link_url=integration.folder_link_url,
                mode=integration.mode,
                bucket_launcher_enabled=integration.bucket_launcher_enabled,
            )
        )
    for alias in aliases:
        element = record.aliases.add(
            alias_id=alias.alias_id,
            upload_id=upload.upload_id,
            path=alias.path,
            slug=alias.slug,
            url=alias.url,
            has_password=alias.has_password,
            max_uses=alias.max_uses,
            use_count=alias.use_count,
            allowed_user_ids=alias.allowed_user_ids,
            external_path=alias.external_path,
        )
        if alias.expires_at is not None:
            element.expires_at.FromDatetime(alias.expires_at)
        if alias.created_at is not None:
            element.created_at.FromDatetime(alias.created_at)
    for meta in meta_uploads:
        record.meta_uploads.add(
            type=pb.MetaUploadType(name=meta.type_name, n=meta.type_n, filename=meta.type_filename),
            metadata_id=meta.metadata_id,
            upload_url=meta.upload_url,
            download_url=meta.download_url,
        )
    return record


def _fill_value(target: pb.MetadataValue, value: dict) -> None:
    """The inverse of _value_json (json_format.ParseDict is several times slower per page)."""
    if "stringValue" in value:
        target.string_value = value["stringValue"]
    if "boolValue" in value:
        target.bool_value = value["boolValue"]
    if "numberValue" in value:
        target.number_value = value["numberValue"]
    for item in value.get("arrayValue", ()):
        _fill_value(target.array_value.add(), item)
    for key, item in value.get("objectValue", {}).items():
        _fill_value(target.object_value[key], item)


def timestamp_field(message, name: str) -> datetime | None:
    """An optional google.protobuf.Timestamp field as an aware datetime (to the microsecond,
    as the database keeps it); None when unset."""
    if not message.HasField(name):
        return None
    ts = getattr(message, name)
    return datetime.fromtimestamp(ts.seconds, tz=UTC).replace(microsecond=ts.nanos // 1000)
