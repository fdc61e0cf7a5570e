"""create_bucket, import_uploads (all or nothing, round trip with ListUploads) and seed_uploads."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from tests.support.uploads_factory import LIST, add, make_bucket, record
from uploads import services
from uploads.models import Alias, Bucket, BucketMetadataKey, MetaUpload, Upload


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue().strip()


def test_create_bucket_prints_its_id(namespace):
    bucket_id = run("create_bucket", "--namespace", "team-a", "docs")
    assert Bucket.objects.get(pk=bucket_id).name == "docs"
    with pytest.raises(CommandError, match="already exists"):
        run("create_bucket", "--namespace", "team-a", "docs")
    with pytest.raises(CommandError, match="not found"):
        run("create_bucket", "--namespace", "nope", "docs")
    with pytest.raises(CommandError, match="DNS label"):
        run("create_bucket", "--namespace", "team-a", "Bad_Name")


def test_round_trip_list_import_list(rpc, namespace, make_key, tmp_path):
    source = make_bucket(name="source")
    run("seed_uploads", "--bucket", str(source.pk), "--count", "60", "--seed", "3")
    key = make_key()

    def listed(bucket_id, **fields):
        return rpc(LIST, {"bucket": {"bucketId": bucket_id}, **fields}, token=key)

    exported = []
    cursor = ""
    while True:
        page = listed(str(source.pk), pageSize=25, cursor=cursor).body
        exported += page["uploads"]
        cursor = page.get("nextCursor", "")
        if not cursor:
            break
    assert len(exported) == 60
    file = tmp_path / "uploads.jsonl"
    file.write_text("".join(json.dumps(u) + "\n" for u in exported))
    # uploadId is unique platform-wide: move the uploads by deleting them first.
    Upload.objects.filter(bucket=source).delete()
    target = make_bucket(name="target")
    assert "imported 60" in run("import_uploads", "--bucket", "team-a/target", str(file))
    again = listed(str(target.pk), pageSize=100).body["uploads"]
    assert again == exported


def test_a_bad_line_is_reported_and_nothing_is_imported(namespace, tmp_path):
    bucket = make_bucket()
    lines = [json.dumps(record(n)) for n in range(1, 1500)]  # spans more than one write batch
    lines.insert(1200, json.dumps(record(9999, sizeBytes="lots")))
    file = tmp_path / "bad.jsonl"
    file.write_text("\n".join(lines) + "\n")
    with pytest.raises(CommandError, match=r"line 1201: .*sizeBytes.*nothing was imported"):
        run("import_uploads", "--bucket", str(bucket.pk), str(file))
    assert not Upload.objects.exists()


@pytest.mark.parametrize(
    "line, message",
    [
        ("not json", "line 2: "),
        ("[1, 2]", "line 2: expected a JSON object"),
        (json.dumps(record(7, unknownField=1)), "line 2: .*unknownField"),
        (json.dumps(record(1)), "line 2: uploadId 'u0001' appears twice"),
        (
            json.dumps(record(7, metadataKvs=[{"key": "k", "valueType": "METADATA_VALUE_TYPE_BOOL", "value": {}}])),
            r"line 2: metadataKvs\[0\].value",
        ),
        (json.dumps(record(7, integrationId="not-a-uuid")), "line 2: integrationId"),
    ],
)
def test_invalid_lines_name_their_line_number(namespace, tmp_path, line, message):
    bucket = make_bucket()
    file = tmp_path / "bad.jsonl"
    file.write_text(json.dumps(record(1)) + "\n" + line + "\n")
    with pytest.raises(CommandError, match=message):
        run("import_uploads", "--bucket", str(bucket.pk), str(file))
    assert not Upload.objects.exists()


ALIAS = {"aliasId": "a-1", "slug": "shared"}


@pytest.mark.parametrize(
    "fourth, message",
    [
        (record(1), "line 4: uploadId 'u0001' already exists"),
        (record(4, aliases=[ALIAS]), "line 4: aliasId 'a-1' already exists"),
    ],
)
def test_a_clash_with_an_earlier_batch_names_its_line(namespace, tmp_path, monkeypatch, fourth, message):
    # Only the current batch's ids are remembered (memory flat in the file's size): a
    # clash with an earlier batch comes back from the database and still names its line.
    monkeypatch.setattr(services, "IMPORT_BATCH", 2)
    bucket = make_bucket()
    file = tmp_path / "dup.jsonl"
    lines = [record(1, aliases=[ALIAS]), record(2), record(3), fourth]
    file.write_text("".join(json.dumps(r) + "\n" for r in lines))
    with pytest.raises(CommandError, match=message):
        run("import_uploads", "--bucket", str(bucket.pk), str(file))
    assert not Upload.objects.exists()


def test_a_line_that_is_not_utf8_is_named(namespace, tmp_path):
    bucket = make_bucket()
    file = tmp_path / "latin1.jsonl"
    file.write_bytes(json.dumps(record(1)).encode() + b"\n" + b'{"slug": "caf\xe9"}\n')
    with pytest.raises(CommandError, match=r"line 2: .*nothing was imported"):
        run("import_uploads", "--bucket", str(bucket.pk), str(file))
    assert not Upload.objects.exists()


def test_a_value_too_long_for_its_column_names_field_and_limit(namespace, tmp_path):
    bucket = make_bucket()
    file = tmp_path / "long.jsonl"
    file.write_text(json.dumps(record(1, author={"userId": "x" * 200})) + "\n")
    with pytest.raises(CommandError, match=r"line 1: author.userId: must be at most 128 characters"):
        run("import_uploads", "--bucket", str(bucket.pk), str(file))


def test_an_existing_upload_id_is_refused(namespace, tmp_path):
    bucket = make_bucket()
    add(bucket, [record(1)])
    file = tmp_path / "again.jsonl"
    file.write_text("\n" + json.dumps(record(2)) + "\n" + json.dumps(record(1)) + "\n")
    with pytest.raises(CommandError, match="line 3: uploadId 'u0001' already exists"):
        run("import_uploads", "--bucket", str(bucket.pk), str(file))
    assert list(Upload.objects.values_list("pk", flat=True)) == ["u0001"]


def test_import_generates_missing_ids_and_times(namespace, rpc, make_key, tmp_path):
    bucket = make_bucket()
    file = tmp_path / "bare.jsonl"
    file.write_text(json.dumps({"slug": "bare"}) + "\n")
    run("import_uploads", "--bucket", str(bucket.pk), str(file))
    (upload,) = rpc(LIST, {"bucket": {"bucketId": str(bucket.pk)}}, token=make_key()).body["uploads"]
    assert upload["slug"] == "bare" and upload["uploadId"]
    assert upload["createdAt"] == upload["updatedAt"]


def test_seed_generates_every_kind_of_child_and_metadata_type(namespace, rpc, make_key):
    bucket = make_bucket()
    run("seed_uploads", "--bucket", f"team-a/{bucket.name}", "--count", "300", "--seed", "5")
    assert Upload.objects.filter(bucket=bucket).count() == 300
    assert Alias.objects.exists() and MetaUpload.objects.exists()
    types = set(BucketMetadataKey.objects.filter(bucket=bucket).values_list("value_type", flat=True))
    assert types == {1, 2, 3, 4, 5}
    assert Upload.objects.exclude(tags=[]).exists() and Upload.objects.exclude(integration_id=None).exists()
    if connection.vendor == "postgresql":  # the closing ANALYZE, in parts: every column has statistics
        with connection.cursor() as cursor:
            cursor.execute("SELECT attname, most_common_elems FROM pg_stats WHERE tablename = 'uploads_upload'")
            stats = dict(cursor.fetchall())
        assert {f.column for f in Upload._meta.concrete_fields} | {"facets"} == set(stats)
        assert stats["facets"]  # per-element frequencies, which the tags/metadata/slug filters are planned with
    # The same seed gives the same data: the first records of a run are those of a shorter one.
    first = list(Upload.objects.filter(bucket=bucket).order_by("upload_id").values_list("pk", "slug"))
    Upload.objects.all().delete()
    run("seed_uploads", "--bucket", str(bucket.pk), "--count", "5", "--seed", "5")
    again = set(Upload.objects.values_list("pk", "slug"))
    assert len(again) == 5 and again <= set(first)
    with pytest.raises(CommandError, match="uploads of --seed 5 already exist"):
        run("seed_uploads", "--bucket", str(bucket.pk), "--count", "5", "--seed", "5")
