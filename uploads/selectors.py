"""Reads of buckets and uploads. A page costs a constant number of queries:
the page itself, aliases, metaUploads and integrations (one each, whatever the size)."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field

from django.db import connection
from django.db.models import BooleanField, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.db.models.functions import Left

from controlplane.auth import Principal, Role
from controlplane.errors import Error
from uploads.api.v1 import uploads_pb2 as pb

from .cursors import Position
from .models import Alias, Bucket, BucketMetadataKey, Integration, MetaUpload, Upload
from .query import ListQuery
from .records import TYPE_NAME

FILTERABLE_TYPES = (pb.METADATA_VALUE_TYPE_STRING, pb.METADATA_VALUE_TYPE_BOOL)


def get_bucket(*, bucket_id: str = "", namespace: str = "", name: str = "") -> Bucket:
    """By id, or by namespace and name; not_found if there is no such bucket."""
    queryset = Bucket.objects.select_related("namespace")
    if bucket_id:
        try:
            bucket = queryset.filter(pk=uuid.UUID(bucket_id)).first()
        except ValueError:
            raise Error.invalid_argument("bucket.bucketId", "must be a UUID") from None
        if bucket is None:
            raise Error.not_found(f"bucket {bucket_id!r} not found")
        return bucket
    bucket = queryset.filter(namespace__name=namespace, name=name).first()
    if bucket is None:
        raise Error.not_found(f"bucket {namespace}/{name} not found")
    return bucket


def readable_namespaces(principal: Principal) -> list[str] | None:
    """Namespaces whose buckets the caller may read; None means all (an admin)."""
    if principal.admin:
        return None
    return sorted(ns for ns in principal.namespaces if principal.has_role(ns, Role.VIEWER))


def unfilterable_keys(bucket: Bucket | None, namespaces: list[str] | None, keys: set[str]) -> dict[str, int]:
    """Keys among `keys` that hold a non-STRING/BOOL value somewhere in the listed buckets."""
    rows = BucketMetadataKey.objects.filter(key__in=keys).exclude(value_type__in=FILTERABLE_TYPES)
    if bucket is not None:
        rows = rows.filter(bucket=bucket)
    elif namespaces is not None:
        rows = rows.filter(bucket__namespace__name__in=namespaces)
    return dict(rows.values_list("key", "value_type"))


@dataclass
class Page:
    uploads: list[Upload]
    integrations: dict
    has_more: bool
    # Children of the page's uploads by upload pk, in record order.
    aliases: dict = field(default_factory=dict)
    meta_uploads: dict = field(default_factory=dict)


def list_uploads(
    *, bucket: Bucket | None, namespaces: list[str] | None, query: ListQuery, position: Position | None, anchor
) -> Page:
    queryset = Upload.objects.all()
    if bucket is not None:
        queryset = queryset.filter(bucket=bucket)
    elif namespaces is not None:
        queryset = queryset.filter(bucket__namespace__name__in=namespaces)
    queryset = _filtered(queryset, query, anchor)
    column = query.sort_by
    if position is not None:
        queryset = queryset.filter(_after(column, position, query.descending))
    sign = "-" if query.descending else ""
    queryset = queryset.order_by(f"{sign}{column}", f"{sign}upload_id")
    rows = list(queryset[: query.page_size + 1])
    page = Page(uploads=rows[: query.page_size], integrations={}, has_more=len(rows) > query.page_size)
    if page.uploads:
        # Always one query per child table for a non-empty page, so the count never depends
        # on the data. Grouped by hand: prefetch_related builds a queryset per upload.
        pks = [u.pk for u in page.uploads]
        page.aliases = _grouped(Alias.objects.filter(upload_id__in=pks).order_by("upload_id", "position"))
        page.meta_uploads = _grouped(MetaUpload.objects.filter(upload_id__in=pks).order_by("upload_id", "position"))
        page.integrations = Integration.objects.in_bulk({u.integration_id for u in page.uploads if u.integration_id})
    return page


def _grouped(children: QuerySet) -> dict:
    groups: dict = {}
    for child in children:
        groups.setdefault(child.upload_id, []).append(child)
    return groups


def _filtered(queryset: QuerySet, query: ListQuery, anchor) -> QuerySet:
    if query.path:
        folder = query.path + "/"
        # LIKE serves the index; the Left() equality keeps it case-sensitive on SQLite too.
        queryset = queryset.annotate(_folder=Left("path", len(folder))).filter(
            Q(path=query.path) | Q(path__startswith=folder, _folder=folder)
        )
    low, high = query.created_range(anchor)
    if low is not None:
        queryset = queryset.filter(created_at__gte=low)
    if high is not None:
        queryset = queryset.filter(created_at__lte=high)
    if query.slug_prefix:
        queryset = queryset.filter(slug_folded__startswith=query.slug_prefix)
    if query.tags:
        queryset = _with_tags(queryset, query.tags)
    if query.metadata:
        queryset = _with_metadata(queryset, query)
    return queryset


def _with_tags(queryset: QuerySet, tags: tuple[str, ...]) -> QuerySet:
    if connection.vendor == "postgresql":
        return queryset.filter(tags__contains=list(tags))  # jsonb @>, GIN-indexed
    # One condition whatever the number of tags (up to 1000): the wanted tags arrive as a
    # JSON array parameter, and all must be among the row's.
    matched = RawSQL(  # noqa: S611 (identifiers from model meta; values are parameters)
        f"(SELECT COUNT(DISTINCT t.value) FROM json_each({_column('tags')}) AS t"  # noqa: S608
        " WHERE t.value IN (SELECT value FROM json_each(%s))) = %s",
        [json.dumps(list(tags)), len(tags)],
        output_field=BooleanField(),
    )
    return queryset.filter(matched)


def _with_metadata(queryset: QuerySet, query: ListQuery) -> QuerySet:
    if connection.vendor == "postgresql":
        wanted = [
            {"key": m.key, "valueType": TYPE_NAME[m.value_type], "value": {_value_key(m.value_type): m.value}}
            for m in query.metadata
        ]
        return queryset.filter(metadata_kvs__contains=wanted)  # jsonb @>, GIN-indexed
    for i, m in enumerate(query.metadata):
        exists = RawSQL(  # noqa: S611 (identifiers from model meta; values are parameters)
            f"EXISTS (SELECT 1 FROM json_each({_column('metadata_kvs')}) AS m"  # noqa: S608
            " WHERE json_extract(m.value, '$.key') = %s AND json_extract(m.value, '$.valueType') = %s"
            f" AND json_extract(m.value, '$.value.{_value_key(m.value_type)}') = %s)",
            [m.key, TYPE_NAME[m.value_type], m.value],
            output_field=BooleanField(),
        )
        queryset = queryset.alias(**{f"_meta{i}": exists}).filter(**{f"_meta{i}": True})
    return queryset


def _value_key(value_type: int) -> str:
    return "stringValue" if value_type == pb.METADATA_VALUE_TYPE_STRING else "boolValue"


def _after(column: str, position: Position, descending: bool) -> RawSQL:
    """Rows strictly after the cursor in (column, upload_id) order: a row-value comparison,
    which PostgreSQL turns into an index range bound (the seek), never an OFFSET."""
    model_field = Upload._meta.get_field(column)
    value = model_field.get_db_prep_value(position.value, connection)
    operator = "<" if descending else ">"
    condition = RawSQL(  # noqa: S611 (identifiers from model meta; values are parameters)
        f"({_column(model_field.column)}, {_column('upload_id')}) {operator} (%s, %s)",
        [value, position.upload_id],
        output_field=BooleanField(),
    )
    return condition


def _column(name: str) -> str:
    quote = connection.ops.quote_name
    return f"{quote(Upload._meta.db_table)}.{quote(name)}"
