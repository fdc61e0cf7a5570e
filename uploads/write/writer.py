"""How validated rows (uploads/write/rows.py) reach the database.

PostgreSQL: COPY, text format, from tuples through psycopg's C row formatter: the
client formats while the server inserts. Elsewhere: bulk_create (correct, not fast).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import orjson
from django.db import IntegrityError, connection

from ..models import Alias, Bucket, BucketMetadataKey, Integration, MetaUpload, Upload
from .rows import ALIAS_COLUMNS, INTEGRATION_COLUMNS, META_UPLOAD_COLUMNS, UPLOAD_COLUMNS, Rows

# What a write may update on its own namespace's integration row: all but its identity.
INTEGRATION_DESCRIPTION = [
    f.name for f in Integration._meta.concrete_fields if f.name not in {"id", "namespace", "integration_id"}
]
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
    statement = f"COPY {quote(model._meta.db_table)} ({names}) FROM STDIN"
    count = 0
    # The raw psycopg cursor: wrap_database_errors makes a clash Django's IntegrityError.
    with connection.wrap_database_errors, connection.cursor() as cursor, cursor.cursor.copy(statement) as copy:
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


def refresh_statistics() -> None:
    """Fresh planner statistics after a bulk write (PostgreSQL; elsewhere nothing).

    One ANALYZE takes its sample size from the column with the highest target: facets has
    1000 (migration 0005), so a plain ANALYZE of the table sorts 300,000 sampled values of
    every column (~25 s at 300k uploads). The model's columns apart take the default
    30,000-row sample, and facets alone its own: ~5 s together.
    """
    if connection.vendor != "postgresql":
        return
    quote = connection.ops.quote_name
    columns = ", ".join(quote(f.column) for f in Upload._meta.concrete_fields)  # facets is not one
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {quote(Upload._meta.db_table)} ({columns})")
        cursor.execute(f"ANALYZE {quote(Upload._meta.db_table)} (facets)")
        cursor.execute(f"ANALYZE {', '.join(quote(model._meta.db_table) for model, _, _ in CHILDREN)}")


UNIQUE_DETAIL = re.compile(r"Key \((\w+)\)=\((.*)\) already exists\.", re.DOTALL)


def clashing_key(exc: IntegrityError) -> tuple[str, str] | tuple[None, None]:
    """(column, value) of a PostgreSQL unique violation, from its detail."""
    diag = getattr(exc.__cause__, "diag", None)
    match = UNIQUE_DETAIL.fullmatch(getattr(diag, "message_detail", None) or "")
    return match.groups() if match else (None, None)
