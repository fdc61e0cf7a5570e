"""Cookie-authenticated RPCs cannot be forged cross-site.

Browsers attach cp_session to cross-site requests in some cases, but never a bearer
token; so only cookie calls are checked for their Origin and limited to JSON, which a
page on another site cannot send without a CORS preflight this service never grants.
"""

from __future__ import annotations

import base64
from urllib.parse import urlencode

import pytest

from containers.api.v1 import namespace_pb2 as pb
from namespaces.models import Namespace
from tests.support.connect import NS, assert_error

pytestmark = pytest.mark.django_db

CREATE = NS + "CreateNamespace"
GET = NS + "GetNamespace"
OWN_ORIGIN = "http://testserver"  # Django's test client host


@pytest.fixture
def signed_in(client, django_user_model, namespace):
    client.force_login(django_user_model.objects.create_superuser("root", password=None))


@pytest.mark.parametrize(
    "headers",
    [{}, {"Origin": OWN_ORIGIN}, {"Sec-Fetch-Site": "same-origin"}, {"Sec-Fetch-Site": "none"}],
    ids=["no Origin (non-browser)", "same Origin", "Sec-Fetch-Site same-origin", "Sec-Fetch-Site none"],
)
def test_same_origin_cookie_calls_are_accepted(rpc, signed_in, headers):
    assert rpc(CREATE, {"namespace": "team-new"}, headers=headers).status == 200
    assert Namespace.objects.filter(name="team-new").exists()


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example"},
        {"Origin": "null"},
        {"Origin": "https://testserver"},  # another scheme is another origin
        {"Origin": "http://testserver:8080"},  # and so is another port
        {"Origin": "http://testserver.evil.example"},
        {"Origin": "https://evil.example", "Sec-Fetch-Site": "same-origin"},  # Origin decides when present
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},  # a sibling subdomain is not this origin
    ],
)
def test_foreign_cookie_calls_are_refused_and_change_nothing(rpc, signed_in, headers):
    assert_error(rpc(CREATE, {"namespace": "team-new"}, headers=headers), "permission_denied")
    assert not Namespace.objects.filter(name="team-new").exists()


def test_configured_origins_are_accepted(rpc, signed_in, settings):
    settings.RPC_ALLOWED_ORIGINS = ["https://console.example"]
    settings.CSRF_TRUSTED_ORIGINS = ["https://admin.example"]
    for origin in ("https://console.example", "https://admin.example"):
        assert rpc(GET, {"namespace": "team-a"}, headers={"Origin": origin}).status == 200


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]
)
def test_simple_request_content_types_are_415(rpc, signed_in, content_type):
    # The three content types a cross-site form or fetch can send without a preflight.
    result = rpc(CREATE, {"namespace": "team-new"}, content_type=content_type, headers={"Origin": OWN_ORIGIN})
    assert result.status == 415, result
    assert not Namespace.objects.filter(name="team-new").exists()


def test_cookie_calls_accept_only_json(rpc, signed_in):
    data = pb.CreateNamespaceRequest(namespace="team-new").SerializeToString()
    result = rpc(CREATE, data=data, content_type="application/proto", headers={"Origin": OWN_ORIGIN})
    assert_error(result, "invalid_argument")
    assert result.body["message"] == "Content-Type: cookie-authenticated calls accept only application/json"
    assert not Namespace.objects.filter(name="team-new").exists()


@pytest.mark.parametrize(
    "headers", [{"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"}, {"Origin": "null"}]
)
def test_bearer_calls_are_not_subject_to_the_origin_check(rpc, admin_key, headers):
    assert rpc(GET, {"namespace": "team-a"}, token=admin_key, headers=headers).status == 200


def test_bearer_calls_may_use_the_binary_codec_cross_site(rpc, admin_key):
    data = pb.GetNamespaceRequest(namespace="team-a").SerializeToString()
    result = rpc(GET, data=data, content_type="application/proto", token=admin_key, headers={"Origin": "https://x.io"})
    assert result.status == 200
    assert pb.Namespace.FromString(result.raw).namespace == "team-a"


def _get_query(encoding: str) -> str:
    if encoding == "json":
        return urlencode({"connect": "v1", "encoding": "json", "message": '{"namespace":"team-a"}'})
    message = base64.urlsafe_b64encode(pb.GetNamespaceRequest(namespace="team-a").SerializeToString()).decode()
    return urlencode({"connect": "v1", "encoding": "proto", "base64": "1", "message": message.rstrip("=")})


def test_cookie_calls_may_use_connect_get_with_json(rpc, signed_in):
    result = rpc(GET, method="GET", data=b"", query=_get_query("json"), headers={"Sec-Fetch-Site": "same-origin"})
    assert result.status == 200, result
    assert result.body["namespace"] == "team-a"
    assert "no-store" in result.response["Cache-Control"]


def test_cookie_calls_may_not_use_connect_get_with_proto(rpc, signed_in):
    result = rpc(GET, method="GET", data=b"", query=_get_query("proto"), headers={"Sec-Fetch-Site": "same-origin"})
    assert_error(result, "invalid_argument")
    assert result.body["message"].startswith("Content-Type:")


def test_cross_site_connect_get_is_refused(rpc, signed_in):
    result = rpc(GET, method="GET", data=b"", query=_get_query("json"), headers={"Sec-Fetch-Site": "cross-site"})
    assert_error(result, "permission_denied")


def test_connect_get_without_a_credential_is_unauthenticated(rpc, namespace):
    assert_error(rpc(GET, method="GET", data=b"", query=_get_query("json")), "unauthenticated")
