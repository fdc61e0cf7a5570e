"""Test data for the uploads service: records in the JSON shape ListUploads returns,
inserted through the import service (so every test also exercises the import path)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from tests.conftest import SYSTEM
from uploads.services import create_bucket, import_uploads

LIST = "uploads.api.v1.BucketUploadsService/ListUploads"
T0 = datetime(2024, 1, 1, tzinfo=UTC)


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def record(n: int, **fields) -> dict:
    """A small valid record; uploadId u0001…, createdAt T0 + n hours unless given."""
    created = T0 + timedelta(hours=n)
    base = {
        "uploadId": f"u{n:04d}",
        "path": f"/files/{n}.txt",
        "slug": f"file-{n:04d}",
        "sizeBytes": str(n * 10),
        "order": n % 7,
        "createdAt": iso(created),
        "updatedAt": iso(created + timedelta(minutes=(n * 37) % 100)),
    }
    base.update(fields)
    return base


def string_kv(key: str, value: str) -> dict:
    return {"key": key, "valueType": "METADATA_VALUE_TYPE_STRING", "value": {"stringValue": value}}


def bool_kv(key: str, value: bool) -> dict:
    return {"key": key, "valueType": "METADATA_VALUE_TYPE_BOOL", "value": {"boolValue": value}}


def make_bucket(namespace: str = "team-a", name: str = "docs"):
    return create_bucket(actor=SYSTEM, namespace=namespace, name=name)


def add(bucket, records: list[dict]) -> None:
    import_uploads(actor=SYSTEM, bucket=bucket, lines=[json.dumps(r) for r in records])


def ids(result) -> list[str]:
    assert result.status == 200, result
    return [u["uploadId"] for u in result.body.get("uploads", [])]


def violation(result) -> dict:
    """The single BadRequest field violation of an invalid_argument error."""
    assert result.status == 400 and result.code == "invalid_argument", result
    (detail,) = result.body["details"]
    assert detail["type"] == "google.rpc.BadRequest"
    (field_violation,) = detail["debug"]["fieldViolations"]
    return field_violation
