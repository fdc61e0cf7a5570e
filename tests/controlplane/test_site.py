"""`/` is a small landing page (the console's "View site" link), linking to the console,
sign-in and the API description; /api/ describes every served service from its descriptor."""

import pytest
from django.conf import settings

from controlplane.site import api_services


def test_landing_page_links_to_console_sign_in_and_api(client, settings):
    settings.OIDC_ISSUER, settings.OIDC_CLIENT_ID = "https://idp.example.com", "control-plane"
    response = client.get("/")
    assert response.status_code == 200
    page = response.content.decode()
    for link in ('href="/admin/"', 'href="/auth/login?next=/auth/me"', 'href="/api/"', 'href="/healthz"'):
        assert link in page


def test_landing_page_says_when_sign_in_is_not_configured(client, settings):
    settings.OIDC_ISSUER = ""
    page = client.get("/").content.decode()
    assert "/auth/login" not in page
    assert "Sign-in: not configured here" in page and "OIDC_ISSUER" in page


def test_the_console_view_site_link_leads_to_the_landing_page(admin_client):
    # admin.site.site_url is "/", which was Django's debug 404 before.
    assert admin_client.get("/admin/").context["site_url"] == "/"


def test_api_description_lists_every_service_and_method(client):
    page = client.get("/api/").content.decode()
    services = api_services()
    assert len(services) == len(settings.RPC_SERVICES)
    for service in services:
        assert f'href="/api/proto/{service.proto_file}"' in page
        for method in service.methods:
            assert f'<code title="POST {method.path}">{method.name}</code>' in page
    assert '<code title="POST /uploads.api.v1.BucketUploadsService/ListUploads">ListUploads</code>' in page
    assert "<td>ListUploadsRequest</td><td>ListUploadsResponse</td>" in page


def test_proto_files_are_served_as_text(client):
    response = client.get("/api/proto/uploads/api/v1/uploads.proto")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert b"service BucketUploadsService" in response.content


@pytest.mark.parametrize("name", ["../controlplane/settings.py", "uploads/api/v1/missing.proto", "%2e%2e/manage.py"])
def test_only_the_served_proto_files_are_readable(client, name):
    assert client.get(f"/api/proto/{name}").status_code == 404
