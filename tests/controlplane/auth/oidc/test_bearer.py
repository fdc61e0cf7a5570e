"""Human bearer tokens: JWTs from the identity provider, verified locally against its JWKS."""

from __future__ import annotations

import time

import jwt
import pytest

from controlplane.auth import Role
from controlplane.auth.oidc import discovery
from namespaces.services import Binding, update_namespace
from tests.conftest import SYSTEM

from .provider import ADMIN_SCOPE, new_signing_key

GET = "containers.api.v1.NamespaceService/GetNamespace"


@pytest.fixture(scope="module")
def tokens(oidc_provider):
    """Tokens really issued by the provider (a CLI's code flow with PKCE), once per module."""
    api = oidc_provider.api_resource
    return {
        "bob": oidc_provider.cli_sign_in("bob", scope=f"openid groups {ADMIN_SCOPE}", resource=api),
        "alice": oidc_provider.cli_sign_in("alice", resource=api),
        "dave": oidc_provider.cli_sign_in("dave", scope=f"openid {ADMIN_SCOPE} upl:bucket:read", resource=api),
        "other": oidc_provider.cli_sign_in("bob", scope="openid read", resource=oidc_provider.other_resource),
    }


def me(client, token):
    response = client.get("/auth/me", HTTP_AUTHORIZATION=f"Bearer {token}")
    return response.status_code, response.json()


def test_provider_access_token_maps_groups_like_a_session(client, rpc, oidc_settings, bound_namespaces, tokens):
    token = tokens["bob"]["access_token"]
    assert jwt.get_unverified_header(token)["typ"] == "at+jwt"
    status, body = me(client, token)
    assert status == 200, body
    assert body["subject"] == "bob"
    assert body["kind"] == "user"
    assert body["namespaces"] == [{"namespace": "team-a", "role": "ROLE_OPERATOR"}]
    assert body["admin"] is False  # bob asked for the admin scope; the provider did not grant it
    assert rpc(GET, {"namespace": "team-a"}, token=token).code == "permission_denied"
    # A binding change applies to the next request with the same token.
    update_namespace(actor=SYSTEM, name="team-b", groups=[Binding("staff", Role.VIEWER)])
    assert me(client, token)[1]["namespaces"] == [
        {"namespace": "team-a", "role": "ROLE_OPERATOR"},
        {"namespace": "team-b", "role": "ROLE_VIEWER"},
    ]


def test_admin_group_token_is_admin(client, rpc, oidc_settings, bound_namespaces, tokens):
    token = tokens["alice"]["access_token"]
    assert me(client, token)[1]["admin"] is True
    assert rpc(GET, {"namespace": "team-b"}, token=token).status == 200


def test_granted_admin_scope_is_admin_and_scopes_reach_the_principal(
    client, rpc, oidc_settings, bound_namespaces, tokens
):
    token = tokens["dave"]["access_token"]
    status, body = me(client, token)
    assert status == 200
    assert body["admin"] is True
    assert set(body["scopes"]) == {ADMIN_SCOPE, "upl:bucket:read"}
    assert rpc(GET, {"namespace": "team-a"}, token=token).status == 200


def test_token_for_another_audience_is_unauthenticated(client, rpc, oidc_settings, bound_namespaces, tokens):
    for token in (tokens["other"]["access_token"], tokens["bob"]["id_token"]):  # other resource; the CLI's ID token
        status, body = me(client, token)
        assert status == 401
        assert body["code"] == "unauthenticated"
        assert "audience" in body["message"]
        assert rpc(GET, {"namespace": "team-a"}, token=token).code == "unauthenticated"


def test_token_signed_by_another_key_is_unauthenticated(client, rpc, oidc_settings, bound_namespaces):
    other_key, other_jwk = new_signing_key()
    for kid in (oidc_settings.kid, other_jwk["kid"]):  # claiming the provider's key id, or its own
        token = oidc_settings.mint({"sub": "alice", "groups": ["platform-admins"]}, key=other_key, kid=kid)
        status, body = me(client, token)
        assert (status, body["code"]) == (401, "unauthenticated")
        assert rpc(GET, {"namespace": "team-a"}, token=token).code == "unauthenticated"


def test_expired_token_is_unauthenticated(client, rpc, oidc_settings, bound_namespaces):
    now = int(time.time())
    expired = oidc_settings.mint({"iat": now - 3600, "exp": now - 120})  # the provider's key; past the clock skew
    status, body = me(client, expired)
    assert (status, body["code"]) == (401, "unauthenticated")
    assert "expired" in body["message"]
    assert rpc(GET, {"namespace": "team-a"}, token=expired).code == "unauthenticated"


@pytest.mark.parametrize(
    ("claims", "message"),
    [
        ({"nbf": int(time.time()) + 3600}, "not valid yet"),
        ({"iss": "https://evil.example"}, "issuer"),
        ({"aud": "controlplane-other"}, "audience"),
        ({"azp": "someone-else"}, "azp"),
        ({"sub": None}, "sub"),
    ],
)
def test_other_invalid_claims_are_unauthenticated(client, oidc_settings, bound_namespaces, claims, message):
    status, body = me(client, oidc_settings.mint(claims))
    assert (status, body["code"]) == (401, "unauthenticated")
    assert message in body["message"]


def test_unsigned_and_symmetric_tokens_are_refused(client, oidc_settings, bound_namespaces):
    valid_claims = jwt.decode(oidc_settings.mint({}), options={"verify_signature": False})
    unsigned = jwt.encode(valid_claims, None, algorithm="none", headers={"kid": oidc_settings.kid})
    # HS256 keyed with the public JWK text: the classic algorithm-confusion attack.
    hs = jwt.encode(valid_claims, str(oidc_settings.jwk["n"]), algorithm="HS256", headers={"kid": oidc_settings.kid})
    for token in (unsigned, hs, "not-a-jwt"):
        status, body = me(client, token)
        assert (status, body["code"]) == (401, "unauthenticated")


def test_valid_minted_token_is_accepted(client, oidc_settings, bound_namespaces):
    """Control for the negative cases above: the same minting, unmodified, passes."""
    status, body = me(client, oidc_settings.mint({}))
    assert status == 200
    assert body["namespaces"] == [{"namespace": "team-a", "role": "ROLE_OPERATOR"}]


def test_jwks_is_cached_and_refetched_once_on_an_unknown_kid(client, oidc_settings, bound_namespaces, monkeypatch):
    fetched = []
    real_get_json = discovery._get_json

    def counting_get_json(url):
        fetched.append(url)
        return real_get_json(url)

    monkeypatch.setattr(discovery, "_get_json", counting_get_json)
    jwks_calls = lambda: [u for u in fetched if u.endswith("/jwks")]  # noqa: E731

    for _ in range(3):
        assert me(client, oidc_settings.mint({}))[0] == 200
    assert len(jwks_calls()) == 1  # discovery + JWKS once, then nothing per request
    assert len(fetched) == 2

    other_key, other_jwk = new_signing_key()
    unknown = oidc_settings.mint({}, key=other_key, kid=other_jwk["kid"])
    monkeypatch.setattr(discovery, "JWKS_REFRESH_MIN_INTERVAL", 0.0)
    assert me(client, unknown)[0] == 401
    assert len(jwks_calls()) == 2  # one refetch for the unknown kid
    monkeypatch.setattr(discovery, "JWKS_REFRESH_MIN_INTERVAL", 60.0)
    assert me(client, unknown)[0] == 401
    assert me(client, unknown)[0] == 401
    assert len(jwks_calls()) == 2  # a flood of unknown kids does not reach the provider
    assert me(client, oidc_settings.mint({}))[0] == 200
    assert len(jwks_calls()) == 2


def test_whoami_rpc_of_a_provider_token(rpc, oidc_settings, bound_namespaces, tokens):
    result = rpc("containers.api.v1.IdentityService/WhoAmI", {}, token=tokens["bob"]["access_token"])
    assert result.status == 200, result
    assert (result.body["kind"], result.body["subject"]) == ("user", "bob")
    assert result.body["namespaces"] == [{"namespace": "team-a", "role": "ROLE_OPERATOR"}]
    assert "keyId" not in result.body
