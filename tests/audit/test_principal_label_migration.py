"""audit 0002 rewrites stored `user:<name>` labels to `local:` / `oidc:<issuer>#` (issue 22, finding 4)."""

import importlib

import pytest
from django.apps import apps

from apikeys.models import ApiKey
from audit.models import AuditEvent
from idempotency.models import RequestRecord
from namespaces.models import Namespace
from workloads.models import EgressEvent, Workspace

pytestmark = pytest.mark.django_db

migration = importlib.import_module("audit.migrations.0002_principal_labels")
ISSUER = "https://idp.example.test"


def test_labels_are_rewritten_by_who_the_name_can_be(django_user_model, settings):
    settings.OIDC_ISSUER = ISSUER
    django_user_model.objects.create_user("root")  # local only
    django_user_model.objects.create_user("admin")  # local, and an OIDC person signed in as admin
    django_user_model.objects.create_user("oidc:admin")
    namespace = Namespace.objects.create(name="team-a")
    for name in ("root", "admin", "alice"):  # alice: no local account, so the OIDC person
        AuditEvent.objects.create(actor=f"user:{name}", action="x", target="namespace:team-a")
        Workspace.objects.create(workspace_id=f"wsp_{name}", namespace=namespace, name=name, created_by=f"user:{name}")
        RequestRecord.objects.create(principal=f"user:{name}", method="CreateWorkspace", request_id=name)
    EgressEvent.objects.create(namespace=namespace, kind="granted", target="a.example", actor="user:alice")
    ApiKey.objects.create(
        key_id="key_1", digest="d" * 64, name="k", namespace=namespace, role=3, created_by="user:root"
    )
    AuditEvent.objects.create(actor="user:root", action="user.password_change", target="user:root")
    AuditEvent.objects.create(actor="api_key:key_1", action="y", target="namespace:team-a")

    migration.forwards(apps, None)

    expected = {"user:root": "local:root", "user:admin": "user:admin", "user:alice": f"oidc:{ISSUER}#alice"}
    assert set(AuditEvent.objects.exclude(action="user.password_change").values_list("actor", flat=True)) == {
        *expected.values(),
        "api_key:key_1",
    }
    assert set(Workspace.objects.values_list("created_by", flat=True)) == set(expected.values())
    # The ambiguous owner's requestIds are gone: neither of the two can replay the other's.
    assert set(RequestRecord.objects.values_list("principal", flat=True)) == {"local:root", f"oidc:{ISSUER}#alice"}
    assert EgressEvent.objects.get().actor == f"oidc:{ISSUER}#alice"
    assert ApiKey.objects.get().created_by == "local:root"
    change = AuditEvent.objects.get(action="user.password_change")
    assert (change.actor, change.target) == ("local:root", "local:root")

    migration.backwards(apps, None)
    assert set(Workspace.objects.values_list("created_by", flat=True)) == {"user:root", "user:admin", "user:alice"}
    assert AuditEvent.objects.get(action="user.password_change").target == "user:root"
