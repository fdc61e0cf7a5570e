"""Integrations belong to a namespace: one tenant's import or seed never changes what another
tenant's ListUploads shows; imports and seeds are audited."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from audit.models import AuditEvent
from controlplane.auth import Role
from tests.conftest import SYSTEM
from tests.support.uploads_factory import LIST, add, make_bucket, record
from uploads.models import Integration, Upload
from uploads.services import seed_uploads

INTEGRATION_ID = "6f1c2b0e-3d4a-4b5c-8d9e-0f1a2b3c4d5e"


def integration(url: str, name: str) -> dict:
    return {
        "integrationId": INTEGRATION_ID,
        "integration": {"integrationId": INTEGRATION_ID, "name": name, "folderLinkUrl": url},
    }


@pytest.fixture
def listed(rpc, make_key, namespace, other_namespace):
    keys = {ns: make_key(ns, Role.VIEWER) for ns in ("team-a", "team-b")}

    def call(ns: str) -> list[dict]:
        result = rpc(LIST, {"bucket": {"namespace": ns, "name": "docs"}}, token=keys[ns])
        assert result.status == 200, result
        return result.body["uploads"]

    return call


def test_an_import_in_another_namespace_leaves_ours_unchanged(listed):
    add(make_bucket("team-a"), [record(1, **integration("https://drive.example/a", "Drive"))])
    before = listed("team-a")
    add(make_bucket("team-b"), [record(2, **integration("https://phish.example/login", "Drive!"))])
    assert listed("team-a") == before
    assert before[0]["integration"]["folderLinkUrl"] == "https://drive.example/a"
    assert listed("team-b")[0]["integration"]["folderLinkUrl"] == "https://phish.example/login"
    assert Integration.objects.filter(integration_id=INTEGRATION_ID).count() == 2


def test_an_import_updates_its_own_namespace_integration(listed):
    add(make_bucket("team-a"), [record(1, **integration("https://drive.example/old", "Drive"))])
    add(make_bucket("team-a", "more"), [record(2, **integration("https://drive.example/new", "Drive"))])
    assert listed("team-a")[0]["integration"]["folderLinkUrl"] == "https://drive.example/new"
    assert Integration.objects.get().namespace.name == "team-a"


def test_an_admin_listing_across_namespaces_shows_each_upload_its_own_integration(rpc, listed, admin_key):
    add(make_bucket("team-a"), [record(1, **integration("https://a.example", "A"))])
    add(make_bucket("team-b"), [record(2, **integration("https://b.example", "B"))])
    result = rpc(LIST, {}, token=admin_key)
    shown = {u["uploadId"]: u["integration"]["folderLinkUrl"] for u in result.body["uploads"]}
    assert shown == {"u0001": "https://a.example", "u0002": "https://b.example"}


def test_imports_and_seeds_are_audited(namespace, other_namespace):
    bucket = make_bucket("team-b")
    add(bucket, [record(1), record(2)])
    imported = AuditEvent.objects.get(action="uploads.import")
    assert (imported.target, imported.namespace, imported.changes) == ("bucket:team-b/docs", "team-b", {"uploads": 2})
    assert seed_uploads(actor=SYSTEM, bucket=bucket, count=5, seed=1, batch=3) == 5
    seeded = AuditEvent.objects.filter(action="uploads.seed").order_by("id")
    assert [e.changes["uploads"] for e in seeded] == [3, 2]
    assert {(e.actor, e.target) for e in seeded} == {(SYSTEM.describe(), "bucket:team-b/docs")}


def test_seed_command_keeps_integrations_per_namespace(namespace, other_namespace):
    for ns in ("team-a", "team-b"):
        Upload.objects.all().delete()  # the same seed makes the same uploadIds, unique platform-wide
        bucket = make_bucket(ns)
        call_command(
            "seed_uploads", "--bucket", str(bucket.pk), "--count", "30", stdout=io.StringIO(), stderr=io.StringIO()
        )
    per_namespace = {
        ns: set(Integration.objects.filter(namespace__name=ns).values_list("integration_id", flat=True))
        for ns in ("team-a", "team-b")
    }
    assert per_namespace["team-a"] and per_namespace["team-a"] == per_namespace["team-b"]  # same seed, two rows each


@pytest.mark.django_db(transaction=True)
def test_migration_copies_each_shared_integration_to_the_namespaces_using_it():
    executor = MigrationExecutor(connection)
    executor.migrate([("uploads", "0003_cross_bucket_indexes")])
    old = executor.loader.project_state([("uploads", "0003_cross_bucket_indexes")]).apps
    Namespace, Bucket = old.get_model("namespaces", "Namespace"), old.get_model("uploads", "Bucket")
    Legacy, OldUpload = old.get_model("uploads", "Integration"), old.get_model("uploads", "Upload")
    legacy = Legacy.objects.create(integration_id=INTEGRATION_ID, name="Drive", folder_link_url="https://d.example")
    Legacy.objects.create(integration_id="00000000-0000-4000-8000-000000000000", name="unused")
    for n, ns in enumerate(["team-a", "team-b", "team-c"]):
        bucket = Bucket.objects.create(namespace=Namespace.objects.create(name=ns), name="docs")
        used = legacy.integration_id if ns != "team-c" else None
        OldUpload.objects.create(
            upload_id=f"u{n}",
            bucket=bucket,
            integration_id=used,
            created_at="2024-01-01T00:00Z",
            updated_at="2024-01-01T00:00Z",
        )

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    copies = Integration.objects.order_by("namespace__name")
    assert [(i.namespace.name, str(i.integration_id), i.folder_link_url) for i in copies] == [
        ("team-a", INTEGRATION_ID, "https://d.example"),
        ("team-b", INTEGRATION_ID, "https://d.example"),
    ]
