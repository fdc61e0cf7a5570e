"""Browser sign-in routes in-process (Django test client) against the real oidc-provider."""

from __future__ import annotations

import base64
import hashlib
import time
from urllib.parse import parse_qs, urlparse

import pytest
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session

from controlplane.auth import Role
from namespaces.services import Binding, update_namespace
from tests.conftest import SYSTEM

from .provider import ADMIN_SCOPE, CLIENT_ID

CALLBACK = "http://testserver/auth/callback"


def start_login(client, next_url: str | None = None):
    response = client.get("/auth/login", {"next": next_url} if next_url else {})
    assert response.status_code == 302, response.content
    return response["Location"]


def sign_in(client, provider, user: str, next_url: str | None = None):
    """/auth/login → the provider's pages (as a plain HTTP client) → /auth/callback."""
    callback_url = provider.sign_in(start_login(client, next_url), user, CALLBACK)
    response = client.get(callback_url.removeprefix("http://testserver"))
    return callback_url, response


def me(client, **extra):
    response = client.get("/auth/me", **extra)
    return response.status_code, response.json()


# ---- OIDC not configured ------------------------------------------------------------------


def test_login_without_oidc_is_unimplemented_and_the_rest_still_works(client, rpc, admin_key, settings):
    settings.OIDC_ISSUER = ""
    response = client.get("/auth/login")
    assert response.status_code == 501
    assert response.json()["code"] == "unimplemented"
    assert "OIDC_ISSUER" in response.json()["message"]
    assert client.get("/auth/callback?code=x&state=y").status_code == 501
    # API keys are unaffected; a JWT cannot be checked, so it is unauthenticated.
    get = "containers.api.v1.NamespaceService/GetNamespace"
    assert rpc(get, {"namespace": "team-a"}, token=admin_key).status == 200
    result = rpc(get, {"namespace": "team-a"}, token="eyJ.a.b")
    assert result.code == "unauthenticated"


def test_me_without_credential_is_a_connect_error(client, db):
    status, body = me(client)
    assert status == 401
    assert body["code"] == "unauthenticated"
    assert body["message"]


def test_me_with_an_api_key(client, make_key, namespace):
    key = make_key("team-a", Role.OPERATOR)
    status, body = me(client, HTTP_AUTHORIZATION=f"Bearer {key}")
    assert status == 200
    assert body["namespaces"] == [{"namespace": "team-a", "role": "ROLE_OPERATOR"}]
    assert body["admin"] is False
    assert body["kind"] == "api_key"


# ---- the authorization request ----------------------------------------------------------


def test_login_redirect_carries_pkce_s256_state_and_nonce(client, oidc_settings, db):
    location = start_login(client, "/admin/")
    url = urlparse(location)
    assert f"{url.scheme}://{url.netloc}{url.path}" == oidc_settings.issuer + "/auth"
    query = {k: v[0] for k, v in parse_qs(url.query).items()}
    assert query["response_type"] == "code"
    assert query["client_id"] == CLIENT_ID
    assert query["redirect_uri"] == CALLBACK
    assert query["code_challenge_method"] == "S256"
    assert set(query["scope"].split()) >= {"openid", "groups", ADMIN_SCOPE}
    entry = client.session["oidc_states"][query["state"]]
    assert entry["nonce"] == query["nonce"]
    verifier = entry["code_verifier"]
    expected = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    assert query["code_challenge"] == expected
    assert client.session["oidc_login_next"] == "/admin/"


@pytest.mark.parametrize(
    "next_url", ["https://evil.example/", "//evil.example/", "/\\evil.example", "http://testserver/admin/"]
)
def test_login_next_only_keeps_local_paths(client, oidc_settings, db, next_url):
    start_login(client, next_url)
    assert client.session["oidc_login_next"] is None


# ---- the callback -----------------------------------------------------------------------


def test_callback_with_forged_state_fails(client, oidc_settings, db):
    start_login(client)
    response = client.get("/auth/callback", {"code": "abc", "state": "forged-state"})
    assert response.status_code == 401
    assert response.json()["code"] == "unauthenticated"
    assert "state" in response.json()["message"]
    assert me(client)[0] == 401


def test_callback_without_a_login_in_this_browser_fails(client, oidc_settings, db):
    response = client.get("/auth/callback", {"code": "abc", "state": "whatever"})
    assert response.status_code == 401
    assert me(client)[0] == 401


def test_callback_from_another_issuer_fails(client, oidc_settings, db):
    location = start_login(client)
    state = parse_qs(urlparse(location).query)["state"][0]
    response = client.get("/auth/callback", {"code": "abc", "state": state, "iss": "https://evil.example"})
    assert response.status_code == 401
    assert "issuer" in response.json()["message"]
    # The refused callback consumed the state: it cannot be used again, with any iss.
    assert state not in client.session["oidc_states"]
    retry = client.get("/auth/callback", {"code": "abc", "state": state, "iss": oidc_settings.issuer})
    assert retry.status_code == 401
    assert "already used" in retry.json()["message"]


def test_sign_in_sets_cp_session_and_maps_groups(client, oidc_settings, bound_namespaces):
    client.get("/healthz")
    start_login(client)
    pre_login_key = client.cookies["cp_session"].value
    callback_url, response = sign_in(client, oidc_settings, "bob")
    assert "iss=" in callback_url  # the provider names itself (RFC 9207) and that is accepted
    assert response.status_code == 302
    assert response["Location"] == "/auth/me"
    cookie = client.cookies["cp_session"]
    assert cookie.value != pre_login_key  # a new session key at sign-in
    assert cookie["httponly"]
    assert cookie["samesite"] == "Lax"
    status, body = me(client)
    assert status == 200
    assert body["subject"] == "bob"
    assert body["name"] == "Bob Operator"
    assert body["admin"] is False
    assert body["namespaces"] == [{"namespace": "team-a", "role": "ROLE_OPERATOR"}]
    assert ADMIN_SCOPE not in body["scopes"]  # requested, but the provider did not grant it to bob
    # The session holds groups and scopes, never a token.
    session = Session.objects.get(session_key=cookie.value).get_decoded()
    assert not any("token" in key for key in session)
    assert session["cp_oidc"]["groups"] == ["staff", "team-a-operators"]


def test_replayed_callback_fails(client, oidc_settings, bound_namespaces):
    callback_url, response = sign_in(client, oidc_settings, "bob")
    assert response.status_code == 302
    replay = client.get(callback_url.removeprefix("http://testserver"))
    assert replay.status_code == 401
    assert "already used" in replay.json()["message"]


def test_next_returns_where_the_user_was_going(client, oidc_settings, bound_namespaces):
    _, response = sign_in(client, oidc_settings, "carol", next_url="/admin/")
    assert response["Location"] == "/admin/"


def test_admin_scope_only_when_granted(client, oidc_settings, bound_namespaces):
    _, response = sign_in(client, oidc_settings, "dave")
    assert response.status_code == 302
    status, body = me(client)
    assert status == 200
    assert body["admin"] is True
    assert ADMIN_SCOPE in body["scopes"]
    assert get_user_model().objects.get(username="oidc:dave").is_staff


def test_admin_group_makes_admin(client, oidc_settings, bound_namespaces, rpc):
    sign_in(client, oidc_settings, "alice")
    status, body = me(client)
    assert status == 200
    assert body["admin"] is True
    assert ADMIN_SCOPE not in body["scopes"]
    result = rpc("containers.api.v1.NamespaceService/GetNamespace", {"namespace": "team-b"})
    assert result.status == 200, result


def test_binding_change_applies_to_a_live_session(client, oidc_settings, bound_namespaces):
    sign_in(client, oidc_settings, "carol")
    assert me(client)[1]["namespaces"] == []
    update_namespace(
        actor=SYSTEM,
        name="team-b",
        groups=[Binding("guests", Role.VIEWER), Binding("team-b-developers", Role.OPERATOR)],
    )
    assert me(client)[1]["namespaces"] == [{"namespace": "team-b", "role": "ROLE_VIEWER"}]
    update_namespace(actor=SYSTEM, name="team-b", groups=[])
    assert me(client)[1]["namespaces"] == []


def test_session_ends_with_the_id_token_or_the_configured_max_age(client, oidc_settings, bound_namespaces, settings):
    sign_in(client, oidc_settings, "bob")
    remaining = client.session.get_expiry_age()
    assert 3500 < remaining <= 3600  # the provider's ID tokens live an hour
    client.get("/auth/logout")
    settings.OIDC_SESSION_MAX_AGE = 120
    sign_in(client, oidc_settings, "bob")
    assert 100 < client.session.get_expiry_age() <= 120
    # Once that time has passed the session is gone server-side.
    Session.objects.filter(session_key=client.cookies["cp_session"].value).update(
        expire_date=Session.objects.get(session_key=client.cookies["cp_session"].value).expire_date.replace(year=2000)
    )
    assert me(client)[0] == 401


def test_session_past_its_id_token_lifetime_is_unauthenticated(client, oidc_settings, bound_namespaces):
    sign_in(client, oidc_settings, "bob")
    session = client.session
    session["cp_oidc"] = {**session["cp_oidc"], "expires_at": time.time() - 1}
    session.save()
    status, body = me(client)
    assert status == 401
    assert "expired" in body["message"]


def test_logout_ends_the_session_server_side(client, oidc_settings, bound_namespaces):
    sign_in(client, oidc_settings, "bob")
    key = client.cookies["cp_session"].value
    response = client.get("/auth/logout")
    assert response.json() == {"signedOut": True}
    assert response.cookies["cp_session"].value == ""  # cleared
    assert not Session.objects.filter(session_key=key).exists()
    client.cookies["cp_session"] = key  # the old cookie, presented again
    assert me(client)[0] == 401


def test_break_glass_superuser_keeps_working(client, db):
    get_user_model().objects.create_superuser("root", "root@example.test", "a-long-break-glass-password")
    response = client.post(
        "/admin/login/?next=/admin/", {"username": "root", "password": "a-long-break-glass-password"}
    )
    assert response.status_code == 302
    assert client.get("/admin/").status_code == 200
    status, body = me(client)
    assert status == 200
    assert body["admin"] is True


def test_admin_login_page_offers_sso(client, oidc_settings, db):
    response = client.get("/admin/login/?next=/admin/")
    assert b"Sign in with SSO" in response.content
    assert b'href="/auth/login?next=/admin/"' in response.content


def test_admin_login_page_without_oidc_has_no_sso_button(client, db, settings):
    settings.OIDC_ISSUER = ""
    assert b"Sign in with SSO" not in client.get("/admin/login/").content


def test_whoami_rpc_over_the_session_cookie(client, rpc, oidc_settings, bound_namespaces):
    sign_in(client, oidc_settings, "bob")
    me = rpc("containers.api.v1.IdentityService/WhoAmI", {}, headers={"Origin": "http://testserver"})
    assert me.status == 200, me
    assert (me.body["kind"], me.body["subject"]) == ("user", "bob")
    assert me.body["namespaces"] == [{"namespace": "team-a", "role": "ROLE_OPERATOR"}]
    assert "groups" in me.body["scopes"]
