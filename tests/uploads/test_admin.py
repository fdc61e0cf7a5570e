"""Buckets and uploads in the console: created only through the service, otherwise read-only."""

import pytest
from django.urls import reverse

from audit.models import AuditEvent
from tests.support.uploads_factory import add, make_bucket, record
from uploads.models import Bucket, Upload

pytestmark = pytest.mark.django_db


def test_a_bucket_is_created_through_the_service_and_audited(oidc_admin_client, namespace):
    response = oidc_admin_client.post(reverse("admin:uploads_bucket_add"), {"namespace": namespace.pk, "name": "docs"})
    assert response.status_code == 302, response.context["errors"] if response.context else response
    bucket = Bucket.objects.get()
    assert (bucket.namespace, bucket.name) == (namespace, "docs")
    assert response["Location"] == reverse("admin:uploads_bucket_changelist")
    event = AuditEvent.objects.get(action="bucket.create")
    assert (event.actor, event.target, event.namespace) == ("oidc:carol", "bucket:team-a/docs", "team-a")


def test_a_bucket_the_service_refuses_shows_its_error_and_writes_nothing(admin_client, namespace):
    response = admin_client.post(reverse("admin:uploads_bucket_add"), {"namespace": namespace.pk, "name": "Bad_Name"})
    assert response.status_code == 200
    assert "DNS label" in response.content.decode()
    assert response.context["adminform"].form.data["name"] == "Bad_Name"
    assert not Bucket.objects.exists()
    assert not AuditEvent.objects.filter(action="bucket.create").exists()


def test_a_bucket_cannot_be_renamed_moved_or_deleted(admin_client, namespace, other_namespace):
    bucket = make_bucket()
    change = reverse("admin:uploads_bucket_change", args=[bucket.pk])
    page = admin_client.get(change)
    assert page.status_code == 200 and not page.context["has_change_permission"]
    assert admin_client.post(change, {"namespace": other_namespace.pk, "name": "moved"}).status_code == 403
    assert (
        admin_client.post(reverse("admin:uploads_bucket_delete", args=[bucket.pk]), {"post": "yes"}).status_code == 403
    )
    bucket.refresh_from_db()
    assert (bucket.namespace, bucket.name) == (namespace, "docs")


def test_uploads_are_read_only(admin_client, namespace):
    add(make_bucket(), [record(1, aliases=[{"aliasId": "a1", "slug": "one"}])])
    upload = Upload.objects.get()
    change = reverse("admin:uploads_upload_change", args=[upload.pk])
    page = admin_client.get(change)
    assert page.status_code == 200 and not page.context["has_change_permission"]
    assert all(not inline.has_change_permission for inline in page.context["inline_admin_formsets"])
    assert admin_client.post(change, {"slug": "renamed", "path": "/x"}).status_code == 403
    assert admin_client.get(reverse("admin:uploads_upload_add")).status_code == 403
    assert (
        admin_client.post(reverse("admin:uploads_upload_delete", args=[upload.pk]), {"post": "yes"}).status_code == 403
    )
    upload.refresh_from_db()
    assert upload.slug == "file-0001"
