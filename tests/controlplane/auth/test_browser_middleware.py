"""Bearer RPC calls skip the middleware that serves only browsers (controlplane.auth.middleware);
the console and cookie calls keep sessions, CSRF and X-Frame-Options."""

import pytest
from django.test import RequestFactory

from controlplane.auth.middleware import is_bearer_rpc

pytestmark = pytest.mark.django_db
GET = "/containers.api.v1.NamespaceService/GetNamespace"


@pytest.mark.parametrize(
    "path, authorization, expected",
    [
        (GET, "Bearer cpk_x", True),
        (GET, None, False),  # a cookie call: its session is the credential
        ("/admin/login/", "Bearer cpk_x", False),
        ("/auth/me", "Bearer cpk_x", False),
        ("/containers.api.v1.NamespaceService/GetNamespace/extra", "Bearer cpk_x", False),
    ],
)
def test_which_requests_are_bearer_rpcs(path, authorization, expected):
    headers = {"HTTP_AUTHORIZATION": authorization} if authorization else {}
    assert is_bearer_rpc(RequestFactory().post(path, **headers)) is expected


def test_a_bearer_rpc_gets_no_browser_headers_nor_cookies(client, admin_key):
    client.cookies["csrftoken"] = "x" * 32
    response = client.post(
        GET, b'{"namespace": "team-a"}', content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {admin_key}"
    )
    assert response.status_code == 200
    assert "X-Frame-Options" not in response and not response.cookies
    assert "Cookie" not in response.get("Vary", "")


def test_the_console_keeps_its_middleware(client, admin_key):
    response = client.get("/admin/login/", HTTP_AUTHORIZATION=f"Bearer {admin_key}")
    assert response.status_code == 200
    assert response["X-Frame-Options"] == "DENY"
    assert "csrftoken" in response.cookies


def test_a_cookie_rpc_still_reads_its_session(oidc_admin_client, namespace):
    response = oidc_admin_client.post(GET, b'{"namespace": "team-a"}', content_type="application/json")
    assert response.status_code == 200, response.content
    assert response["X-Frame-Options"] == "DENY"
