"""Writes: buckets and uploads. manage.py commands (and later RPCs) call these."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import connection, transaction
from django.utils import timezone
from google.protobuf import json_format

from audit.services import record as audit
from controlplane.auth import Principal
from controlplane.errors import Error
from namespaces.models import Namespace
from namespaces.services import validate_namespace_name
from uploads.api.v1 import uploads_pb2 as pb

from .models import Alias, Bucket, BucketMetadataKey, Integration, MetaUpload, Upload
from .records import Rows, rows_from_record

IMPORT_BATCH = 1000


def create_bucket(*, actor: Principal, namespace: str, name: str) -> Bucket:
    validate_namespace_name(namespace)
    validate_namespace_name(name, field="name")  # bucket names are DNS labels too
    with transaction.atomic():
        owner = Namespace.objects.filter(name=namespace).first()
        if owner is None:
            raise Error.not_found(f"namespace {namespace!r} not found")
        if Bucket.objects.filter(namespace=owner, name=name).exists():
            raise Error.already_exists(f"bucket {namespace}/{name} already exists")
        bucket = Bucket.objects.create(namespace=owner, name=name)
        audit(actor=actor, action="bucket.create", target=f"{namespace}/{name}", namespace=namespace)
    return bucket


@dataclass
class ImportFailed(Exception):
    line: int
    message: str

    def __str__(self):
        return f"line {self.line}: {self.message}"


def import_uploads(*, bucket: Bucket, lines: Iterable[str]) -> int:
    """Imports JSON Lines of upload records, all or nothing. Blank lines are skipped.

    Every given field is kept, uploadId/createdAt/updatedAt included; a record without
    uploadId gets a new one. Raises ImportFailed naming the first bad line.
    """
    now = timezone.now()
    seen: set[str] = set()
    batch: list[tuple[int, Rows]] = []
    count = 0
    with transaction.atomic():
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            rows = _parse_line(line, number, bucket, now)
            if rows.upload.upload_id in seen:
                raise ImportFailed(number, f"uploadId {rows.upload.upload_id!r} appears twice in the file")
            seen.add(rows.upload.upload_id)
            batch.append((number, rows))
            if len(batch) >= IMPORT_BATCH:
                count += _write_checked(batch, bucket)
                batch = []
        count += _write_checked(batch, bucket)
    return count


def _parse_line(line: str, number: int, bucket: Bucket, now) -> Rows:
    try:
        data = json.loads(line)
        if not isinstance(data, dict):
            raise ImportFailed(number, "expected a JSON object")
        message = json_format.ParseDict(data, pb.Upload(), ignore_unknown_fields=False)
        return rows_from_record(message, bucket_id=bucket.pk, now=now)
    except ImportFailed:
        raise
    except Error as exc:
        raise ImportFailed(number, exc.message) from None
    except (ValueError, json_format.ParseError) as exc:
        raise ImportFailed(number, str(exc)[:300]) from None


def _write_checked(batch: list[tuple[int, Rows]], bucket: Bucket) -> int:
    if not batch:
        return 0
    ids = {rows.upload.upload_id: number for number, rows in batch}
    taken = set(Upload.objects.filter(pk__in=ids).values_list("pk", flat=True))
    if taken:
        first = min(taken, key=ids.__getitem__)
        raise ImportFailed(ids[first], f"uploadId {first!r} already exists")
    alias_lines: dict[str, int] = {}
    for number, rows in batch:
        for alias in rows.aliases:
            if alias.alias_id in alias_lines:
                raise ImportFailed(number, f"aliasId {alias.alias_id!r} is used twice")
            alias_lines[alias.alias_id] = number
    taken = set(Alias.objects.filter(pk__in=alias_lines).values_list("pk", flat=True))
    if taken:
        first = min(taken, key=alias_lines.__getitem__)
        raise ImportFailed(alias_lines[first], f"aliasId {first!r} already exists")
    write_rows([rows for _, rows in batch], bucket)
    return len(batch)


def write_rows(batch: Iterable[Rows], bucket: Bucket) -> int:
    """Inserts validated rows; returns how many uploads.

    PostgreSQL: uploads are COPYed while `batch` is still being produced, so a generator
    (seed_uploads) and the server work in parallel; the small child tables follow.
    Elsewhere: bulk_create.
    """
    integrations: dict = {}
    key_types: set[tuple[str, int]] = set()
    aliases: list[Alias] = []
    metas: list[MetaUpload] = []
    uploads: list[Upload] = []

    def children(rows: Rows) -> Upload:
        if rows.integration:
            integrations[rows.integration.integration_id] = rows.integration
        key_types.update(rows.metadata_types)
        aliases.extend(rows.aliases)
        metas.extend(rows.meta_uploads)
        return rows.upload

    if connection.vendor == "postgresql":
        count = _copy(Upload, (children(rows) for rows in batch))
    else:
        uploads = [children(rows) for rows in batch]
        count = len(Upload.objects.bulk_create(uploads))
    if integrations:
        Integration.objects.bulk_create(
            integrations.values(),
            update_conflicts=True,
            unique_fields=["integration_id"],
            update_fields=[f.name for f in Integration._meta.concrete_fields if not f.primary_key],
        )
    register_metadata_keys(bucket, key_types)
    if connection.vendor == "postgresql":
        _copy(Alias, aliases)
        _copy(MetaUpload, metas)
    else:
        Alias.objects.bulk_create(aliases)
        MetaUpload.objects.bulk_create(metas)
    return count


def register_metadata_keys(bucket: Bucket, key_types: set[tuple[str, int]]) -> None:
    if key_types:
        BucketMetadataKey.objects.bulk_create(
            [BucketMetadataKey(bucket=bucket, key=k, value_type=t) for k, t in key_types], ignore_conflicts=True
        )


def _copy(model, objects: Iterable) -> int:
    fields = [f for f in model._meta.concrete_fields if not (f.primary_key and f.get_internal_type() == "BigAutoField")]
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    table = connection.ops.quote_name(model._meta.db_table)
    # Raw attribute values (psycopg adapts str/int/bool/datetime/UUID); JSON columns as text.
    attnames = [f.attname for f in fields]
    json_positions = [i for i, f in enumerate(fields) if f.get_internal_type() == "JSONField"]
    count = 0
    with connection.cursor() as cursor, cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
        for obj in objects:
            row = [getattr(obj, name) for name in attnames]
            for i in json_positions:
                row[i] = json.dumps(row[i], separators=(",", ":"))
            copy.write_row(row)
            count += 1
    return count
