"""Reads of buckets. ListUploads costs at most two statements after the key lookup: the bucket
(with the metadata key types the request filters on), shared by the permission check and the
listing, and the page (read/page_query: one statement, any page size)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.db import connection

from controlplane.auth import Principal, Role
from controlplane.errors import Error
from controlplane.lookups import looked_up
from controlplane.precompiled import prepared

from .models import Bucket, BucketMetadataKey
from .read.page_query import FILTERABLE_TYPES, dialect
from .read.rows_to_json import from_json


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


@dataclass(frozen=True)
class BucketScope:
    """A bucket as ListUploads needs it."""

    id: uuid.UUID
    namespace_id: int
    namespace: str
    # Of the metadata keys the request filters on: those holding a non-STRING/BOOL type here.
    unfilterable: dict[str, int]


def bucket_scope(*, bucket_id: str = "", namespace: str = "", name: str = "", keys=()) -> BucketScope:
    """The bucket by id, or by namespace and name, once per call (the permission check and the
    listing share it); not_found if there is no such bucket."""
    keys = tuple(sorted(set(keys)))
    return looked_up(
        ("uploads.bucket", bucket_id, namespace, name, keys), lambda: _bucket_scope(bucket_id, namespace, name, keys)
    )


def _bucket_scope(bucket_id: str, namespace: str, name: str, keys: tuple[str, ...]) -> BucketScope:
    d = dialect()
    if bucket_id:
        try:
            found_by, params = "b.id = %s", [d.uuid(uuid.UUID(bucket_id))]
        except ValueError:
            raise Error.invalid_argument("bucket.bucketId", "must be a UUID") from None
    else:
        found_by, params = "n.name = %s AND b.name = %s", [namespace, name]
    types = "NULL"
    if keys:
        types = (
            f"SELECT {d.aggregate(d.array('k.key, k.value_type'), 'k.key')} FROM uploads_bucketmetadatakey k"  # noqa: S608 (fixed identifiers; values are parameters)
            f" WHERE k.bucket_id = b.id AND k.key IN ({', '.join(['%s'] * len(keys))})"
            f" AND k.value_type NOT IN ({', '.join(str(t) for t in FILTERABLE_TYPES)})"
        )
        params = [*keys, *params]
    with prepared(), connection.cursor() as cursor:
        cursor.execute(
            f"SELECT b.id, b.namespace_id, n.name, ({types}) FROM uploads_bucket b"  # noqa: S608 (fixed identifiers)
            f" JOIN namespaces_namespace n ON n.id = b.namespace_id WHERE {found_by}",
            params,
        )
        row = cursor.fetchone()
    if row is None:
        raise Error.not_found(
            f"bucket {bucket_id!r} not found" if bucket_id else f"bucket {namespace}/{name} not found"
        )
    return BucketScope(
        id=row[0] if isinstance(row[0], uuid.UUID) else uuid.UUID(row[0]),
        namespace_id=row[1],
        namespace=row[2],
        unfilterable={key: value_type for key, value_type in from_json(row[3]) or ()},
    )


def unfilterable_keys(namespaces: list[str] | None, keys: set[str]) -> dict[str, int]:
    """Keys among `keys` that hold a non-STRING/BOOL value somewhere in the listed buckets."""
    rows = BucketMetadataKey.objects.filter(key__in=keys).exclude(value_type__in=FILTERABLE_TYPES)
    if namespaces is not None:
        rows = rows.filter(bucket__namespace__name__in=namespaces)
    return dict(rows.values_list("key", "value_type"))
