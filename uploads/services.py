"""Writes: buckets and uploads. manage.py commands (and later RPCs) call these."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice

import orjson
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from google.protobuf import json_format

from audit.services import record as audit
from controlplane.auth import Principal
from controlplane.errors import Error
from namespaces.models import Namespace
from namespaces.validation import validate_namespace_name

from .models import Alias, Bucket, Upload
from .write import synthetic
from .write.json_to_rows import rows_from_json
from .write.rows import Rows
from .write.writer import clashing_key, write_rows

# Records per COPY: the ids an import remembers to name a clash's line; seed commits each batch.
IMPORT_BATCH = 20000
SEED_BATCH = 20000


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
    Raises ImportFailed naming the first bad line.

    Lines are parsed while the database takes the rows before them (one COPY per batch of
    IMPORT_BATCH records). Memory stays flat in the file's size: only the current batch's
    ids are remembered; a clash with an earlier batch or a stored upload comes back from
    the database's unique constraint, and the batch's ids name its line.
    """
    now = timezone.now()
    numbered = ((number, line) for number, line in enumerate(lines, start=1) if line.strip())
    count = 0
    with transaction.atomic():
        while batch := list(islice(numbered, IMPORT_BATCH)):
            count += _import_batch(batch, bucket, now)
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


def _import_batch(batch: list[tuple[int, str | bytes]], bucket: Bucket, now) -> int:
    upload_lines: dict[str, int] = {}  # id → line, to name the line of a clash
    alias_lines: dict[str, int] = {}

    def parsed() -> Iterator[Rows]:
        for number, line in batch:
            rows = _parse_line(line, number, bucket, now)
            if rows.upload_id in upload_lines:
                raise ImportFailed(number, f"uploadId {rows.upload_id!r} appears twice in the file")
            upload_lines[rows.upload_id] = number
            for alias in rows.aliases:
                if alias[0] in alias_lines:
                    raise ImportFailed(number, f"aliasId {alias[0]!r} is used twice")
                alias_lines[alias[0]] = number
            yield rows

    if connection.vendor != "postgresql":  # no streaming here: check first, then write
        rows = list(parsed())
        _refuse_taken(Upload, "uploadId", upload_lines)
        _refuse_taken(Alias, "aliasId", alias_lines)
        return write_rows(rows, bucket)
    try:
        return write_rows(parsed(), bucket)
    except IntegrityError as exc:
        column, value = clashing_key(exc)
        lines = {"upload_id": ("uploadId", upload_lines), "alias_id": ("aliasId", alias_lines)}.get(column)
        if lines is None or value not in lines[1]:
            raise
        raise ImportFailed(lines[1][value], f"{lines[0]} {value!r} already exists") from None


def _refuse_taken(model, name: str, lines: dict[str, int]) -> None:
    taken = set(model.objects.filter(pk__in=lines).values_list("pk", flat=True))
    if taken:
        first = min(taken, key=lines.__getitem__)
        raise ImportFailed(lines[first], f"{name} {first!r} already exists")
