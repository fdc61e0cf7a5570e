import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apikeys.models import ApiKey
from audit.models import AuditEvent
from controlplane.auth import Role
from namespaces.models import GroupBinding, ImagePullSecret, InternalTarget
from tests.support.roundtrips import RoundTrips

NS = "containers.api.v1.NamespaceService/"
pytestmark = pytest.mark.django_db


def test_create_get_list_namespace(rpc, admin_key):
    created = rpc(
        NS + "CreateNamespace",
        {"namespace": "team-c", "groups": [{"oidcGroup": "eng", "role": "ROLE_VIEWER"}]},
        token=admin_key,
    )
    assert created.status == 200, created
    assert created.body["namespace"] == "team-c"
    assert created.body["groups"] == [{"oidcGroup": "eng", "role": "ROLE_VIEWER"}]
    got = rpc(NS + "GetNamespace", {"namespace": "team-c"}, token=admin_key)
    assert got.body["namespace"] == "team-c"
    listed = rpc(NS + "ListNamespaces", {}, token=admin_key)
    assert [n["namespace"] for n in listed.body["namespaces"]] == ["team-a", "team-c"]


def test_create_duplicate_is_already_exists(rpc, admin_key):
    result = rpc(NS + "CreateNamespace", {"namespace": "team-a"}, token=admin_key)
    assert (result.status, result.code) == (409, "already_exists")


@pytest.mark.parametrize(
    "body, field",
    [
        ({"namespace": "Team_A"}, "namespace"),
        ({"namespace": "x" * 64}, "namespace"),
        ({"namespace": ""}, "namespace"),
        ({"namespace": "ok", "groups": [{"oidcGroup": "eng"}]}, "groups[0].role"),
        ({"namespace": "ok", "groups": [{"oidcGroup": "", "role": "ROLE_VIEWER"}]}, "groups[0].oidcGroup"),
        (
            {"namespace": "ok", "groups": [{"oidcGroup": "a", "role": 1}, {"oidcGroup": "a", "role": 2}]},
            "groups[1].oidcGroup",
        ),
        (
            {"namespace": "ok", "internalTargets": [{"name": "db", "host": "db.internal", "ports": [70000]}]},
            "internalTargets[0].ports[0]",
        ),
        (
            {"namespace": "ok", "imagePullSecrets": [{"registry": "ghcr.io", "secretRef": ""}]},
            "imagePullSecrets[0].secretRef",
        ),
    ],
)
def test_create_rejects_bad_input_naming_the_field(rpc, admin_key, body, field):
    result = rpc(NS + "CreateNamespace", body, token=admin_key)
    assert (result.status, result.code) == (400, "invalid_argument"), result
    assert result.body["message"].startswith(field + ":")
    assert result.body["details"][0]["debug"]["fieldViolations"][0]["field"] == field


def test_update_replaces_lists_whole_and_keeps_unsent_ones(rpc, admin_key):
    body = {
        "namespace": "team-a",
        "groups": [{"oidcGroup": "eng", "role": "ROLE_OPERATOR"}, {"oidcGroup": "ops", "role": "ROLE_ADMIN"}],
        "internalTargets": [{"name": "db", "host": "10.0.0.5", "ports": [5432]}],
        "quotas": {"maxSandboxes": 5},
    }
    assert rpc(NS + "UpdateNamespace", body, token=admin_key).status == 200
    result = rpc(
        NS + "UpdateNamespace",
        {"namespace": "team-a", "groups": [{"oidcGroup": "qa", "role": "ROLE_VIEWER"}]},
        token=admin_key,
    )
    assert result.body["groups"] == [{"oidcGroup": "qa", "role": "ROLE_VIEWER"}]
    assert result.body["internalTargets"] == [{"name": "db", "host": "10.0.0.5", "ports": [5432]}]
    assert result.body["quotas"] == {"maxSandboxes": 5}
    cleared = rpc(NS + "UpdateNamespace", {"namespace": "team-a", "groups": []}, token=admin_key)
    assert "groups" not in cleared.body


def test_failed_update_changes_nothing(rpc, admin_key):
    rpc(NS + "UpdateNamespace", {"namespace": "team-a", "groups": [{"oidcGroup": "eng", "role": 2}]}, token=admin_key)
    bad = {
        "namespace": "team-a",
        "groups": [{"oidcGroup": "new", "role": 1}],
        "internalTargets": [{"name": "BAD NAME", "host": "x"}],
    }
    assert rpc(NS + "UpdateNamespace", bad, token=admin_key).code == "invalid_argument"
    after = rpc(NS + "GetNamespace", {"namespace": "team-a"}, token=admin_key)
    assert after.body["groups"] == [{"oidcGroup": "eng", "role": "ROLE_OPERATOR"}]


def test_update_unknown_namespace_is_not_found(rpc, admin_key):
    assert rpc(NS + "UpdateNamespace", {"namespace": "nope", "groups": []}, token=admin_key).code == "not_found"


def test_issue_list_revoke_api_key(rpc, admin_key):
    issued = rpc(NS + "IssueApiKey", {"namespace": "team-a", "name": "ci", "role": "ROLE_OPERATOR"}, token=admin_key)
    assert issued.status == 200, issued
    plaintext = issued.body["plaintext"]
    key_id = issued.body["key"]["keyId"]
    assert plaintext.startswith("cpk_")
    listed = rpc(NS + "ListApiKeys", {"namespace": "team-a"}, token=admin_key)
    entry = next(k for k in listed.body["keys"] if k["keyId"] == key_id)
    assert {"keyId", "name", "role", "created"} <= set(entry)
    assert "plaintext" not in entry
    # The new key works (and is not an admin), until revoked.
    assert rpc(NS + "ListNamespaces", {}, token=plaintext).code == "permission_denied"
    assert rpc(NS + "RevokeApiKey", {"keyId": key_id}, token=admin_key).body == {}
    assert rpc(NS + "ListNamespaces", {}, token=plaintext).code == "unauthenticated"


def test_issue_api_key_validation(rpc, admin_key):
    assert (
        rpc(NS + "IssueApiKey", {"namespace": "team-a", "name": "x"}, token=admin_key)
        .body["message"]
        .startswith("role:")
    )
    assert rpc(NS + "IssueApiKey", {"namespace": "nope", "name": "x", "role": 1}, token=admin_key).code == "not_found"
    assert rpc(NS + "RevokeApiKey", {"keyId": "key_missing"}, token=admin_key).code == "not_found"


def test_list_pagination_walks_every_key_once(rpc, admin_key, make_key):
    for _ in range(7):
        make_key("team-a", Role.VIEWER)
    seen, token = [], ""
    while True:
        page = rpc(NS + "ListApiKeys", {"pageSize": 3, "pageToken": token}, token=admin_key)
        seen += [k["keyId"] for k in page.body["keys"]]
        token = page.body.get("nextPageToken", "")
        if not token:
            break
    assert sorted(seen) == sorted(ApiKey.objects.values_list("key_id", flat=True))
    assert len(seen) == len(set(seen)) == 8
    tampered = rpc(NS + "ListApiKeys", {"pageSize": 3, "pageToken": "abc"}, token=admin_key)
    assert tampered.code == "invalid_argument"


def test_changes_are_audited(rpc, admin_key):
    rpc(NS + "CreateNamespace", {"namespace": "team-z"}, token=admin_key)
    event = AuditEvent.objects.get(action="namespace.create", target="namespace:team-z")
    assert event.actor.startswith("api_key:key_")


CHILDREN = {
    "groups": [{"oidcGroup": "ops", "role": "ROLE_ADMIN"}, {"oidcGroup": "eng", "role": "ROLE_VIEWER"}],
    "internalTargets": [
        {"name": "redis", "host": "redis.internal", "ports": [6379]},
        {"name": "db", "host": "db.internal", "ports": [5432, 5433]},
    ],
    "imagePullSecrets": [
        {"registry": "quay.io", "secretRef": "vault://q"},
        {"registry": "ghcr.io", "secretRef": "vault://g"},
    ],
}


def _in_orm_order(namespace: str) -> dict:
    """The children in the order the ORM's order_by gives them (the database's collation)."""
    filtered = {"namespace__name": namespace}
    return {
        "groups": [
            {"oidcGroup": group, "role": Role(role).wire_name}
            for group, role in GroupBinding.objects.filter(**filtered)
            .order_by("oidc_group")
            .values_list("oidc_group", "role")
        ],
        "internalTargets": [
            {"name": name, "host": host, "ports": ports}
            for name, host, ports in InternalTarget.objects.filter(**filtered)
            .order_by("name")
            .values_list("name", "host", "ports")
        ],
        "imagePullSecrets": [
            {"registry": registry, "secretRef": ref}
            for registry, ref in ImagePullSecret.objects.filter(**filtered)
            .order_by("registry")
            .values_list("registry", "secret_ref")
        ],
    }


def test_get_namespace_returns_every_child_in_order(rpc, admin_key):
    children = {**CHILDREN, "groups": [*CHILDREN["groups"], {"oidcGroup": "Eng-Leads", "role": "ROLE_OPERATOR"}]}
    assert rpc(NS + "CreateNamespace", {"namespace": "team-c", **children}, token=admin_key).status == 200
    expected = _in_orm_order("team-c")
    assert len(expected["groups"]) == 3
    got = rpc(NS + "GetNamespace", {"namespace": "team-c"}, token=admin_key)
    assert {k: got.body[k] for k in CHILDREN} == expected
    listed = rpc(NS + "ListNamespaces", {}, token=admin_key).body["namespaces"]
    assert {k: listed[1][k] for k in CHILDREN} == expected
    assert "groups" not in listed[0]  # a namespace without children: empty lists, left out in JSON


@pytest.mark.django_db(transaction=True)  # autocommit, as in production: transactions show
def test_get_namespace_is_the_key_lookup_and_one_query_without_a_transaction(rpc, admin_key):
    rpc(NS + "CreateNamespace", {"namespace": "team-c", **CHILDREN}, token=admin_key)  # also writes last_used
    with RoundTrips() as database:
        got = rpc(NS + "GetNamespace", {"namespace": "team-c"}, token=admin_key)
    assert got.status == 200
    tables = [sql.rsplit(" FROM ", 1)[1].split()[0].strip('"') for sql, _ in database.statements]
    assert tables == ["apikeys_apikey", "namespaces_namespace"], database.statements
    assert database.transactions == 0
    if connection.vendor == "postgresql":  # what went over the wire: no BEGIN/COMMIT either
        assert database.round_trips == 2, database.sent


@pytest.mark.django_db(transaction=True)
def test_a_write_still_runs_in_one_transaction(rpc, admin_key):
    with RoundTrips() as database:
        rpc(NS + "UpdateNamespace", {"namespace": "team-a", "groups": CHILDREN["groups"]}, token=admin_key)
    assert database.transactions >= 1
    if connection.vendor == "postgresql":
        assert database.sent.count("BEGIN") == 1 and database.sent[-1] == "COMMIT", database.sent


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("count", [1, 4])
def test_list_namespaces_is_one_query_however_many_namespaces(rpc, admin_key, count):
    for i in range(count):
        rpc(NS + "CreateNamespace", {"namespace": f"team-{i}x", **CHILDREN}, token=admin_key)
    with CaptureQueriesContext(connection) as queries:
        listed = rpc(NS + "ListNamespaces", {}, token=admin_key)
    assert len(listed.body["namespaces"]) == count + 1
    assert len(queries) == 2  # the key lookup and the page
