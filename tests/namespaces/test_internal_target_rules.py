"""An internal target's host obeys the egress deny rules (issue 22, finding 2): a granted name
cannot be re-pointed at a denied host, through the API or the console, nor registered there."""

import pytest
from django.urls import reverse

from audit.models import AuditEvent
from controlplane.auth import Role
from workloads.models import EgressGrant

pytestmark = pytest.mark.django_db

NS = "containers.api.v1.NamespaceService/"
GRANT = "containers.api.v1.EgressService/GrantEgress"


@pytest.fixture
def granted_db(rpc, admin_key, make_key):
    """Target db → 10.0.0.5, granted to the namespace by an operator."""
    body = {"namespace": "team-a", "internalTargets": [{"name": "db", "host": "10.0.0.5", "ports": [5432]}]}
    assert rpc(NS + "UpdateNamespace", body, token=admin_key).status == 200
    grant = rpc(GRANT, {"namespace": "team-a", "target": "db"}, token=make_key("team-a", Role.OPERATOR))
    assert grant.status == 200, grant
    return grant.body["grant"]


def _targets(namespace):
    return list(namespace.internal_targets.values_list("name", "host"))


@pytest.mark.parametrize("host", ["169.254.169.254", "::ffff:169.254.169.254", "fd20:ce::254", "metadata.goog"])
def test_update_namespace_cannot_re_point_a_granted_target(rpc, admin_key, namespace, granted_db, host):
    audit_rows = AuditEvent.objects.count()
    body = {"namespace": "team-a", "internalTargets": [{"name": "db", "host": host, "ports": [80]}]}
    result = rpc(NS + "UpdateNamespace", body, token=admin_key)
    assert result.code == "permission_denied", result
    assert result.body["message"].startswith("internalTargets[0].host: egress to")
    assert _targets(namespace) == [("db", "10.0.0.5")]
    assert EgressGrant.objects.filter(grant_id=granted_db["grantId"]).exists()
    assert AuditEvent.objects.count() == audit_rows


def test_create_namespace_refuses_a_denied_target(rpc, admin_key):
    body = {"namespace": "team-c", "internalTargets": [{"name": "meta", "host": "127.0.0.1"}]}
    result = rpc(NS + "CreateNamespace", body, token=admin_key)
    assert result.code == "permission_denied" and "127.0.0.0/8" in result.body["message"], result


@pytest.mark.parametrize("host, code", [("169.254.169.254", "permission_denied"), ("127.1", "invalid_argument")])
def test_register_internal_target_refuses_a_denied_host(rpc, admin_key, namespace, host, code):
    body = {"namespace": "team-a", "target": {"name": "meta", "host": host}}
    result = rpc(NS + "RegisterInternalTarget", body, token=admin_key)
    assert result.code == code, result
    assert "target.host" in result.body["message"]
    assert not namespace.internal_targets.exists()


def test_console_cannot_re_point_a_granted_target(admin_client, namespace, granted_db):
    target = namespace.internal_targets.get()
    data = {
        "max_sandboxes": "4",
        **_inline("group_bindings"),
        **_inline("image_pull_secrets"),
        **_inline("internal_targets", total=1, initial=1),
        "internal_targets-0-id": str(target.pk),
        "internal_targets-0-namespace": str(namespace.pk),
        "internal_targets-0-name": "db",
        "internal_targets-0-host": "169.254.169.254",
        "internal_targets-0-ports": "80",
    }
    response = admin_client.post(reverse("admin:namespaces_namespace_change", args=[namespace.pk]), data)
    assert response.status_code == 200  # the form again, with the service's refusal
    assert "internalTargets[0].host: egress to 169.254.169.254 is always denied" in response.content.decode()
    namespace.refresh_from_db()
    assert _targets(namespace) == [("db", "10.0.0.5")] and namespace.max_sandboxes is None
    assert EgressGrant.objects.filter(grant_id=granted_db["grantId"]).exists()


def test_an_allowed_re_point_keeps_the_grant(rpc, admin_key, namespace, granted_db):
    body = {"namespace": "team-a", "internalTargets": [{"name": "db", "host": "10.0.0.6", "ports": [5432]}]}
    assert rpc(NS + "UpdateNamespace", body, token=admin_key).status == 200
    assert _targets(namespace) == [("db", "10.0.0.6")]
    assert EgressGrant.objects.filter(grant_id=granted_db["grantId"]).exists()


def _inline(prefix: str, total: int = 0, initial: int = 0) -> dict:
    return {
        f"{prefix}-TOTAL_FORMS": str(total),
        f"{prefix}-INITIAL_FORMS": str(initial),
        f"{prefix}-MIN_NUM_FORMS": "0",
        f"{prefix}-MAX_NUM_FORMS": "1000",
    }
