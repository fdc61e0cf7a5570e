"""Writes: buckets and uploads. manage.py commands (and later RPCs) call these."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice

import orjson
from django.db import connection, transaction
from django.utils import timezone
from google.protobuf import json_format

from audit.services import record as audit
from controlplane.auth import Principal
from controlplane.errors import Error
from namespaces.models import Namespace
from namespaces.services import validate_namespace_name

from . import synthetic
from .models import Alias, Bucket, BucketMetadataKey, Integration, MetaUpload, Upload
from .record_json import rows_from_json
from .rows import ALIAS_COLUMNS, INTEGRATION_COLUMNS, META_UPLOAD_COLUMNS, UPLOAD_COLUMNS, Rows

# Records per write: import checks each batch's ids in one query; seed commits each batch.
IMPORT_BATCH = 2000
SEED_BATCH = 20000
# What an import may update on its own namespace's integration row: all but its identity.
INTEGRATION_DESCRIPTION = [
    f.name for f in Integration._meta.concrete_fields if f.name not in {"id", "namespace", "integration_id"}
]


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
        audit(actor=actor, action="bucket.create", target=_target(bucket), namespace=namespace)
    return bucket


def _target(bucket: Bucket) -> str:
    return f"bucket:{bucket.namespace.name}/{bucket.name}"


@dataclass
class ImportFailed(Exception):
    line: int
    message: str

    def __str__(self):
        return f"line {self.line}: {self.message}"


def import_uploads(*, actor: Principal, bucket: Bucket, lines: Iterable[str | bytes]) -> int:
    """Imports JSON Lines of upload records, all or nothing, and audits it. Blank lines are skipped.

    Every given field is kept, uploadId/createdAt/updatedAt included; a record without
    uploadId gets a new one. Integrations are written to the bucket's namespace only.
    Raises ImportFailed naming the first bad line. Memory stays bounded by IMPORT_BATCH
    records whatever the file's size: ids are checked against the database (which by then
    holds the file's earlier batches too) rather than remembered.
    """
    now = timezone.now()
    batch: list[tuple[int, Rows]] = []
    count = 0
    with transaction.atomic():
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            batch.append((number, _parse_line(line, number, bucket, now)))
            if len(batch) >= IMPORT_BATCH:
                count += _write_checked(batch, bucket)
                batch = []
        count += _write_checked(batch, bucket)
        audit(
            actor=actor,
            action="uploads.import",
            target=_target(bucket),
            namespace=bucket.namespace.name,
            changes={"uploads": count},
        )
    return count


def seed_uploads(
    *, actor: Principal, bucket: Bucket, count: int, seed: int, batch: int = SEED_BATCH, progress=None
) -> int:
    """Writes `count` synthetic uploads, one transaction (and one audit entry) per batch:
    bounded memory, and an interrupted run leaves whole, audited batches behind.
    The records go through the same validation as imported ones (rows_from_json)."""
    if count < 0:
        raise Error.invalid_argument("count", "must be at least 0")
    now = timezone.now()
    generated = synthetic.records(count, seed)
    done = 0
    while done < count:
        size = min(batch, count - done)
        with transaction.atomic():
            write_rows((rows_from_json(r, bucket_id=bucket.pk, now=now) for r in islice(generated, size)), bucket)
            audit(
                actor=actor,
                action="uploads.seed",
                target=_target(bucket),
                namespace=bucket.namespace.name,
                changes={"uploads": size, "seed": seed, "offset": done},
            )
        done += size
        if progress is not None:
            progress(size)
    return done


def _parse_line(line: str | bytes, number: int, bucket: Bucket, now) -> Rows:
    try:
        data = orjson.loads(line)
        if not isinstance(data, dict):
            raise ImportFailed(number, "expected a JSON object")
        return rows_from_json(data, bucket_id=bucket.pk, now=now)
    except ImportFailed:
        raise
    except Error as exc:
        raise ImportFailed(number, exc.message) from None
    except (ValueError, json_format.ParseError) as exc:  # orjson.JSONDecodeError is a ValueError
        raise ImportFailed(number, str(exc)[:300]) from None


def _write_checked(batch: list[tuple[int, Rows]], bucket: Bucket) -> int:
    """Writes a batch after checking its ids, so a clash names its line (the database's
    own constraints would only name the id)."""
    if not batch:
        return 0
    ids: dict[str, int] = {}
    for number, rows in batch:
        if rows.upload_id in ids:
            raise ImportFailed(number, f"uploadId {rows.upload_id!r} appears twice in the file")
        ids[rows.upload_id] = number
    taken = set(Upload.objects.filter(pk__in=ids).values_list("pk", flat=True))
    if taken:
        first = min(taken, key=ids.__getitem__)
        raise ImportFailed(ids[first], f"uploadId {first!r} already exists")
    alias_lines: dict[str, int] = {}
    for number, rows in batch:
        for alias in rows.aliases:
            if alias[0] in alias_lines:
                raise ImportFailed(number, f"aliasId {alias[0]!r} is used twice")
            alias_lines[alias[0]] = number
    taken = set(Alias.objects.filter(pk__in=alias_lines).values_list("pk", flat=True))
    if taken:
        first = min(taken, key=alias_lines.__getitem__)
        raise ImportFailed(alias_lines[first], f"aliasId {first!r} already exists")
    return write_rows([rows for _, rows in batch], bucket)


# Child tables: (model, columns, the Rows attribute holding its rows). One more table
# filled from the record is one more entry here and one more Rows field.
CHILDREN = (
    (Alias, ALIAS_COLUMNS, "aliases"),
    (MetaUpload, META_UPLOAD_COLUMNS, "meta_uploads"),
)


def write_rows(batch: Iterable[Rows], bucket: Bucket) -> int:
    """Inserts validated rows; returns how many uploads.

    PostgreSQL: uploads are COPYed while `batch` is still being produced, so a generator
    (seed_uploads) and the server work in parallel; the child tables follow, one COPY each.
    Elsewhere: bulk_create.
    """
    integrations: dict = {}
    key_types: set[tuple[str, int]] = set()
    children: dict[str, list[tuple]] = {name: [] for _, _, name in CHILDREN}

    def upload(rows: Rows) -> tuple:
        if rows.integration:
            integrations[rows.integration[0]] = rows.integration
        key_types.update(rows.metadata_types)
        for name, found in children.items():
            found.extend(getattr(rows, name))
        return rows.upload

    write = _copy if connection.vendor == "postgresql" else _bulk_create
    count = write(Upload, UPLOAD_COLUMNS, (upload(rows) for rows in batch))
    if integrations:
        Integration.objects.bulk_create(
            [
                Integration(namespace_id=bucket.namespace_id, **dict(zip(INTEGRATION_COLUMNS, row, strict=True)))
                for row in integrations.values()  # the bucket's namespace: never another tenant's row
            ],
            update_conflicts=True,
            unique_fields=["namespace", "integration_id"],
            update_fields=INTEGRATION_DESCRIPTION,
        )
    register_metadata_keys(bucket, key_types)
    for model, columns, name in CHILDREN:
        write(model, columns, children[name])
    return count


def register_metadata_keys(bucket: Bucket, key_types: set[tuple[str, int]]) -> None:
    if key_types:
        BucketMetadataKey.objects.bulk_create(
            [BucketMetadataKey(bucket=bucket, key=k, value_type=t) for k, t in key_types], ignore_conflicts=True
        )


def _copy(model, columns: tuple[str, ...], rows: Iterable[tuple]) -> int:
    """COPY in text format: psycopg's C row formatter, one round trip per 32 kB or so."""
    quote = connection.ops.quote_name
    names = ", ".join(quote(model._meta.get_field(c).column) for c in columns)
    count = 0
    with (
        connection.cursor() as cursor,
        cursor.cursor.copy(f"COPY {quote(model._meta.db_table)} ({names}) FROM STDIN") as copy,
    ):
        write_row = copy.write_row
        for row in rows:
            write_row(row)
            count += 1
    return count


def _bulk_create(model, columns: tuple[str, ...], rows: Iterable[tuple]) -> int:
    """Other databases: correct rather than fast, through the ORM (JSON columns decoded back)."""
    json_columns = {f.attname for f in model._meta.concrete_fields if f.get_internal_type() == "JSONField"}
    objects = []
    for row in rows:
        values = dict(zip(columns, row, strict=True))
        for name in json_columns.intersection(values):
            values[name] = orjson.loads(values[name])
        objects.append(model(**values))
    return len(model.objects.bulk_create(objects))
