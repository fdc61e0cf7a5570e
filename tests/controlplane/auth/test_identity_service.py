"""containers.api.v1.IdentityService/WhoAmI: any authenticated principal, the same body as /auth/me."""

from __future__ import annotations

from controlplane.auth import Role

WHOAMI = "containers.api.v1.IdentityService/WhoAmI"


def test_whoami_of_a_namespace_key_matches_auth_me(client, rpc, namespace, make_key):
    key = make_key("team-a", Role.OPERATOR)
    result = rpc(WHOAMI, {}, token=key)
    assert result.status == 200, result
    body = result.body
    assert body["kind"] == "api_key"
    assert "admin" not in body  # proto3 JSON omits false
    assert body["namespaces"] == [{"namespace": "team-a", "role": "ROLE_OPERATOR"}]
    assert body["keyId"] == body["subject"] and body["keyId"]
    assert key not in result.raw.decode()
    # One serializer: /auth/me is the same message with every field present.
    me = client.get("/auth/me", HTTP_AUTHORIZATION=f"Bearer {key}").json()
    assert {k: v for k, v in me.items() if v not in ("", [], False)} == body
    assert set(me) == {"subject", "name", "kind", "admin", "namespaces", "scopes", "keyId", "workspaceScope"}


def test_whoami_of_an_admin_key(rpc, admin_key):
    body = rpc(WHOAMI, {}, token=admin_key).body
    assert (body["kind"], body["admin"]) == ("api_key", True)
    assert body["namespaces"] == [{"namespace": "team-a", "role": "ROLE_ADMIN"}]


def test_whoami_needs_a_credential(rpc, db):
    result = rpc(WHOAMI, {})
    assert (result.status, result.code) == (401, "unauthenticated")
    assert rpc(WHOAMI, {}, token="cpk_nope").code == "unauthenticated"
