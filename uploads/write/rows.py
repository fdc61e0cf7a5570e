"""What the write path stores for one upload record: plain tuples in a fixed column order.

Tuples rather than model instances because seeding and importing write a million records:
a tuple goes straight into `COPY` (PostgreSQL) and costs no `Model.__init__`. JSON columns
hold JSON text, serialized once. Both producers, records.rows_from_record (from a proto
message) and json_to_rows.rows_from_json (from the JSON shape), end in `checked`, so limits
are enforced the same way whichever produced the rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from controlplane.errors import Error

from ..models import Alias, BucketMetadataKey, Integration, MetaUpload, Upload

UPLOAD_COLUMNS = (
    "upload_id",
    "bucket_id",
    "path",
    "slug",
    "slug_folded",
    "url",
    "content_url",
    "size_bytes",
    "tags",
    "integration_id",
    "allow_any_extension",
    "default_slug_extension",
    "generated_description",
    "private",
    "created_at",
    "updated_at",
    "author_user_id",
    "author_username",
    "last_modified_by_user_id",
    "last_modified_by_username",
    "thumbnail_generation_version",
    "ai_description_generation_version",
    "ai_tags_generation_version",
    "virus_scan_generation_version",
    "ai_description_input_ref",
    "intent_metadata",
    "external_path",
    "order",
    "is_virtual_file",
    "integration_hidden",
    "version",
    "thumbnail_content_type_urn",
    "thumbnail_content_type_icon_name",
    "thumbnail_content_type_icon_url",
    "metadata_kvs",
)
ALIAS_COLUMNS = (
    "alias_id",
    "upload_id",
    "position",
    "path",
    "slug",
    "url",
    "has_password",
    "expires_at",
    "max_uses",
    "use_count",
    "allowed_user_ids",
    "created_at",
    "external_path",
)
META_UPLOAD_COLUMNS = (
    "upload_id",
    "position",
    "type_name",
    "type_n",
    "type_filename",
    "metadata_id",
    "upload_url",
    "download_url",
)
INTEGRATION_COLUMNS = (
    "integration_id",
    "name",
    "oauth_client_id",
    "folder_behavior",
    "folder_link_url",
    "mode",
    "bucket_launcher_enabled",
)

# The record's JSON name of each length-limited column, for errors a client can act on.
LIMITED = {
    Upload: {
        "upload_id": "uploadId",
        "default_slug_extension": "defaultSlugExtension",
        "author_user_id": "author.userId",
        "author_username": "author.username",
        "last_modified_by_user_id": "lastModifiedBy.userId",
        "last_modified_by_username": "lastModifiedBy.username",
    },
    Alias: {"alias_id": "aliases[{i}].aliasId"},
    MetaUpload: {"type_name": "metaUploads[{i}].type.name", "metadata_id": "metaUploads[{i}].metadataId"},
    Integration: {"name": "integration.name", "oauth_client_id": "integration.oauthClientId"},
}
METADATA_KEY_LIMIT = BucketMetadataKey._meta.get_field("key").max_length
ENUM_COLUMNS = {
    "folder_behavior": ("integration.folderBehavior", frozenset(Integration.FolderBehavior.values)),
    "mode": ("integration.mode", frozenset(Integration.Mode.values)),
}


@dataclass(slots=True)
class Rows:
    """One record, as the rows that store it (column orders above)."""

    upload: tuple
    aliases: list[tuple]
    meta_uploads: list[tuple]
    integration: tuple | None
    metadata_types: list[tuple[str, int]]  # (key, MetadataValueType) of each metadataKvs element

    @property
    def upload_id(self) -> str:
        return self.upload[0]


def json_text(value) -> str:
    """A JSON column's value: text, for COPY into jsonb (orjson: one C call per value)."""
    return orjson.dumps(value).decode()


def _limits(model, columns: tuple[str, ...]) -> list[tuple[int, int, str]]:
    return [
        (columns.index(column), model._meta.get_field(column).max_length, name)
        for column, name in LIMITED[model].items()
    ]


UPLOAD_LIMITS = _limits(Upload, UPLOAD_COLUMNS)
ALIAS_LIMITS = _limits(Alias, ALIAS_COLUMNS)
META_UPLOAD_LIMITS = _limits(MetaUpload, META_UPLOAD_COLUMNS)
INTEGRATION_LIMITS = _limits(Integration, INTEGRATION_COLUMNS)


def checked(rows: Rows) -> Rows:
    """Rows the database will take: every varchar within its length, every enum known.
    The database would refuse them too, but as a DataError naming no record or field."""
    _check_lengths(rows.upload, UPLOAD_LIMITS, 0)
    for i, alias in enumerate(rows.aliases):
        _check_lengths(alias, ALIAS_LIMITS, i)
    for i, meta in enumerate(rows.meta_uploads):
        _check_lengths(meta, META_UPLOAD_LIMITS, i)
    if rows.integration is not None:
        _check_lengths(rows.integration, INTEGRATION_LIMITS, 0)
        for column, (name, known) in ENUM_COLUMNS.items():
            if rows.integration[INTEGRATION_COLUMNS.index(column)] not in known:
                raise Error.invalid_argument(name, "must be one of the enum's values")
    for i, (key, _) in enumerate(rows.metadata_types):
        if len(key) > METADATA_KEY_LIMIT:
            raise Error.invalid_argument(f"metadataKvs[{i}].key", f"must be at most {METADATA_KEY_LIMIT} characters")
    return rows


def _check_lengths(row: tuple, limits: list[tuple[int, int, str]], index: int) -> None:
    for position, limit, name in limits:
        if len(row[position]) > limit:
            raise Error.invalid_argument(name.format(i=index), f"must be at most {limit} characters")
