"""The operator console: access by principal, and every write through the services."""

from datetime import timedelta

import pytest
from django.contrib import admin as django_admin
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse
from django.utils import timezone

from apikeys import tokens
from apikeys.models import ApiKey
from apikeys.services import issue_agent_key, issue_api_key
from audit.models import AuditEvent
from controlplane.admin_site import ControlPlaneAdminSite, check_registry
from controlplane.auth import Role
from namespaces.models import Namespace
from tests.conftest import SYSTEM
from tests.support.uploads_factory import add, make_bucket, record

NS = "containers.api.v1.NamespaceService/"
pytestmark = pytest.mark.django_db

ADMIN_PAGES = [
    "admin:index",
    "admin:namespaces_namespace_changelist",
    "admin:namespaces_namespace_add",
    "admin:apikeys_apikey_changelist",
    "admin:apikeys_apikey_issue",
    "admin:audit_auditevent_changelist",
]


def inline_management(prefix: str, total: int = 0, initial: int = 0) -> dict:
    return {
        f"{prefix}-TOTAL_FORMS": str(total),
        f"{prefix}-INITIAL_FORMS": str(initial),
        f"{prefix}-MIN_NUM_FORMS": "0",
        f"{prefix}-MAX_NUM_FORMS": "1000",
    }


def namespace_form(name: str = "", **fields) -> dict:
    data = {"name": name} if name else {}
    data.update(inline_management("group_bindings"))
    data.update(inline_management("internal_targets"))
    data.update(inline_management("image_pull_secrets"))
    data.update(fields)
    return data


@pytest.mark.parametrize("page", ADMIN_PAGES)
def test_pages_load_for_a_superuser(admin_client, namespace, page):
    response = admin_client.get(reverse(page))
    assert response.status_code == 200


@pytest.mark.parametrize("page", ADMIN_PAGES)
def test_pages_refused_for_a_non_admin_user(staff_client, namespace, page):
    response = staff_client.get(reverse(page))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


def test_console_follows_the_principal_not_is_staff(oidc_admin_client, namespace):
    assert oidc_admin_client.get(reverse("admin:index")).status_code == 200
    response = oidc_admin_client.get(reverse("admin:namespaces_namespace_change", args=[namespace.pk]))
    assert response.status_code == 200
    inlines = response.context["inline_admin_formsets"]
    assert [inline.formset.prefix for inline in inlines] == ["group_bindings", "internal_targets", "image_pull_secrets"]
    assert all(inline.has_add_permission and inline.has_change_permission for inline in inlines)
    data = namespace_form(max_sandboxes="7")
    response = oidc_admin_client.post(reverse("admin:namespaces_namespace_change", args=[namespace.pk]), data)
    assert response.status_code == 302
    assert AuditEvent.objects.filter(action="namespace.update").latest("id").actor == "oidc:carol"


def test_bearer_admin_key_does_not_open_the_console(client, admin_key):
    response = client.get(reverse("admin:index"), HTTP_AUTHORIZATION=f"Bearer {admin_key}")
    assert response.status_code == 302


def test_break_glass_login_still_works(client, admin_user):
    response = client.post(reverse("admin:login"), {"username": "admin", "password": "password"})
    assert response.status_code == 302
    assert client.get(reverse("admin:index")).status_code == 200


def test_namespace_list_shows_counts(admin_client, namespace, make_key):
    make_key("team-a", Role.VIEWER)
    response = admin_client.get(reverse("admin:namespaces_namespace_changelist"))
    assert response.status_code == 200
    assert response.context["cl"].result_list[0].api_key_count == 1


def test_create_namespace_through_the_service(admin_client):
    data = namespace_form(
        "team-c",
        max_sandboxes="5",
        **inline_management("group_bindings", total=1),
        **{"group_bindings-0-oidc_group": "eng", "group_bindings-0-role": str(Role.OPERATOR.value)},
        **inline_management("internal_targets", total=1),
        **{"internal_targets-0-name": "db", "internal_targets-0-host": "10.0.0.5", "internal_targets-0-ports": "5432"},
    )
    response = admin_client.post(reverse("admin:namespaces_namespace_add"), data)
    assert response.status_code == 302, response.context["errors"] if response.context else response
    namespace = Namespace.objects.get(name="team-c")
    assert namespace.max_sandboxes == 5
    assert list(namespace.group_bindings.values_list("oidc_group", "role")) == [("eng", Role.OPERATOR)]
    assert list(namespace.internal_targets.values_list("name", "host", "ports")) == [("db", "10.0.0.5", [5432])]
    event = AuditEvent.objects.get(action="namespace.create", target="namespace:team-c")
    assert event.actor == "local:admin"
    assert event.changes["groups"] == [["eng", "ROLE_OPERATOR"]]


def test_service_rejection_on_create_shows_an_error_and_changes_nothing(admin_client):
    data = namespace_form("team-c", max_sandboxes="2000000")  # above the service's quota ceiling
    response = admin_client.post(reverse("admin:namespaces_namespace_add"), data)
    assert response.status_code == 200
    assert "quotas.maxSandboxes: must be between 0 and 1000000" in response.content.decode()
    assert response.context["adminform"].form.data["max_sandboxes"] == "2000000"  # what was typed is kept
    assert not Namespace.objects.filter(name="team-c").exists()
    assert not AuditEvent.objects.filter(target="namespace:team-c").exists()


def test_form_validation_rejects_a_bad_name(admin_client):
    response = admin_client.post(reverse("admin:namespaces_namespace_add"), namespace_form("Team_C"))
    assert response.status_code == 200
    assert "name" in response.context["adminform"].form.errors
    assert not Namespace.objects.exclude(name="team-a").exists()


def test_edit_replaces_lists_through_the_service(admin_client, namespace, rpc, admin_key):
    rpc(
        NS + "UpdateNamespace",
        {"namespace": "team-a", "groups": [{"oidcGroup": "old", "role": "ROLE_VIEWER"}]},
        token=admin_key,
    )
    binding = namespace.group_bindings.get()
    data = namespace_form(
        max_running_jobs="3",
        **inline_management("group_bindings", total=2, initial=1),
        **{
            "group_bindings-0-id": str(binding.pk),
            "group_bindings-0-namespace": str(namespace.pk),
            "group_bindings-0-oidc_group": "old",
            "group_bindings-0-role": "1",
            "group_bindings-0-DELETE": "on",
            "group_bindings-1-oidc_group": "new",
            "group_bindings-1-role": str(Role.ADMIN.value),
        },
        **inline_management("image_pull_secrets", total=1),
        **{"image_pull_secrets-0-registry": "ghcr.io", "image_pull_secrets-0-secret_ref": "vault:ci/ghcr"},
    )
    response = admin_client.post(reverse("admin:namespaces_namespace_change", args=[namespace.pk]), data)
    assert response.status_code == 302, response.context["errors"] if response.context else response
    namespace.refresh_from_db()
    assert namespace.max_running_jobs == 3
    assert list(namespace.group_bindings.values_list("oidc_group", "role")) == [("new", Role.ADMIN)]
    assert list(namespace.image_pull_secrets.values_list("registry", flat=True)) == ["ghcr.io"]
    event = AuditEvent.objects.filter(action="namespace.update").latest("id")
    assert event.actor == "local:admin"
    assert event.changes["groups"] == {"from": [["old", "ROLE_VIEWER"]], "to": [["new", "ROLE_ADMIN"]]}


def test_service_rejection_on_edit_changes_nothing(admin_client, namespace):
    audit_rows = AuditEvent.objects.count()
    data = namespace_form(
        max_sandboxes="4",
        **inline_management("internal_targets", total=1),
        **{"internal_targets-0-name": "db", "internal_targets-0-host": "not a host!", "internal_targets-0-ports": ""},
    )
    response = admin_client.post(reverse("admin:namespaces_namespace_change", args=[namespace.pk]), data)
    assert response.status_code == 200
    assert "internalTargets[0].host" in response.content.decode()
    namespace.refresh_from_db()
    assert namespace.max_sandboxes is None
    assert not namespace.internal_targets.exists()
    assert AuditEvent.objects.count() == audit_rows


def test_namespaces_cannot_be_deleted_from_the_console(admin_client, namespace):
    response = admin_client.get(reverse("admin:namespaces_namespace_delete", args=[namespace.pk]))
    assert response.status_code == 403


def test_issue_key_shows_plaintext_once_and_stores_only_the_digest(admin_client, namespace):
    data = {"namespace": "team-a", "name": "deploy bot", "role": str(Role.OPERATOR.value), "expires_in_days": "30"}
    response = admin_client.post(reverse("admin:apikeys_apikey_issue"), data)
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    plaintext = response.context["plaintext"]
    assert tokens.is_well_formed(plaintext)
    assert response.content.decode().count(plaintext) == 1
    key = ApiKey.objects.get(name="deploy bot")
    assert key.digest == tokens.digest(plaintext)
    assert plaintext not in {key.key_id, key.digest, key.hint, key.name}
    assert key.expires_at is not None and key.kind == ApiKey.Kind.STANDARD
    issued = AuditEvent.objects.get(action="api_key.issue", target=f"api_key:{key.key_id}")
    assert issued.actor == "local:admin"
    # Neither the session nor a later page carries it.
    assert plaintext not in str(dict(admin_client.session))
    listing = admin_client.get(reverse("admin:apikeys_apikey_changelist"))
    assert plaintext not in listing.content.decode()
    assert key.key_id in listing.content.decode()


def test_issue_key_form_errors(admin_client, namespace):
    response = admin_client.post(reverse("admin:apikeys_apikey_issue"), {"namespace": "nope", "name": "", "role": "9"})
    assert response.status_code == 200
    assert set(response.context["form"].errors) == {"namespace", "name", "role"}
    assert not ApiKey.objects.exists()


def test_issue_key_service_error_is_shown(admin_client, namespace):
    data = {"namespace": "team-a", "name": "   ", "role": "1"}  # blank once stripped: the service refuses it
    response = admin_client.post(reverse("admin:apikeys_apikey_issue"), data)
    assert response.status_code == 200
    assert response.context["form"].errors
    assert not ApiKey.objects.exists()


def test_changelist_links_to_the_issue_view(admin_client):
    response = admin_client.get(reverse("admin:apikeys_apikey_changelist"))
    assert reverse("admin:apikeys_apikey_issue") in response.content.decode()


def test_keys_cannot_be_added_edited_or_deleted_generically(admin_client, namespace, make_key):
    make_key()
    key = ApiKey.objects.get()
    assert admin_client.get(reverse("admin:apikeys_apikey_add")).status_code == 403
    assert admin_client.get(reverse("admin:apikeys_apikey_delete", args=[key.pk])).status_code == 403
    change_url = reverse("admin:apikeys_apikey_change", args=[key.pk])
    assert admin_client.get(change_url).status_code == 200  # view only
    assert admin_client.post(change_url, {"name": "renamed"}).status_code == 403
    key.refresh_from_db()
    assert key.name != "renamed"


def test_revoke_action_makes_the_key_unauthenticated(admin_client, namespace, make_key, rpc):
    plaintext = make_key("team-a", Role.ADMIN)
    key = ApiKey.objects.get()
    assert rpc(NS + "GetNamespace", {"namespace": "team-a"}, token=plaintext).status == 200
    response = admin_client.post(
        reverse("admin:apikeys_apikey_changelist"),
        {"action": "revoke_selected", "_selected_action": [str(key.pk)]},
    )
    assert response.status_code == 302
    key.refresh_from_db()
    assert key.state() == "revoked"
    assert AuditEvent.objects.filter(action="api_key.revoke", target=f"api_key:{key.key_id}", actor="local:admin")
    result = rpc(NS + "GetNamespace", {"namespace": "team-a"}, token=plaintext)
    assert (result.status, result.code) == (401, "unauthenticated")


@pytest.mark.parametrize(("state", "expected"), [("active", "fresh"), ("revoked", "gone"), ("expired", "old")])
def test_key_state_filter(admin_client, namespace, state, expected):
    for name in ("fresh", "gone", "old"):
        issue_api_key(actor=SYSTEM, namespace="team-a", name=name, role=Role.VIEWER)
    ApiKey.objects.filter(name="gone").update(revoked_at=timezone.now())
    ApiKey.objects.filter(name="old").update(expires_at=timezone.now() - timedelta(days=1))
    response = admin_client.get(reverse("admin:apikeys_apikey_changelist"), {"state": state})
    assert [k.name for k in response.context["cl"].result_list] == [expected]


def test_audit_log_is_visible_and_read_only(admin_client, namespace):
    response = admin_client.get(reverse("admin:audit_auditevent_changelist"))
    assert response.status_code == 200
    assert "namespace:team-a" in response.content.decode()
    event = AuditEvent.objects.get(action="namespace.create")
    detail = admin_client.get(reverse("admin:audit_auditevent_change", args=[event.pk]))
    assert detail.status_code == 200
    assert admin_client.post(reverse("admin:audit_auditevent_change", args=[event.pk]), {}).status_code == 403
    assert admin_client.get(reverse("admin:audit_auditevent_add")).status_code == 403
    assert admin_client.get(reverse("admin:audit_auditevent_delete", args=[event.pk])).status_code == 403


# ---- one principal-based base class for every page --------------------------------------------


def test_every_model_admin_derives_from_the_console_base_class():
    assert django_admin.site._registry, "the console registers models"
    check_registry(django_admin.site)  # what app start-up runs

    class Plain(django_admin.ModelAdmin):
        pass

    site = ControlPlaneAdminSite(name="probe")
    site.register(Namespace, Plain)
    with pytest.raises(ImproperlyConfigured, match="must derive from ConsoleAdmin"):
        check_registry(site)


def test_local_accounts_are_not_editable_in_the_console(admin_client):
    assert not django_admin.site.is_registered(get_user_model())
    assert admin_client.get("/admin/auth/user/").status_code == 404


def _registered_pages() -> list[str]:
    pages = []
    for model in django_admin.site._registry:
        opts = model._meta
        pages.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"))
        row = model._default_manager.first()
        if row is not None:
            pages.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[row.pk]))
    return pages


@pytest.fixture
def admin_objects(namespace, make_key):
    make_key()
    add(make_bucket(), [record(1, aliases=[{"aliasId": "a1", "slug": "one"}])])


def test_an_oidc_admin_who_is_not_staff_can_use_every_page(oidc_admin_client, admin_client, admin_objects):
    pages = _registered_pages()
    assert len(pages) >= 2 * 5  # namespaces, API keys, audit, buckets, uploads at least, list and row
    for page in pages:
        assert oidc_admin_client.get(page).status_code == 200, page
        assert admin_client.get(page).status_code == 200, page


def test_an_oidc_admin_sees_the_same_console_as_a_superuser(oidc_admin_client, admin_client):
    index = reverse("admin:index")
    apps = [
        [(m["object_name"], m["perms"]) for m in app["models"]]
        for app in oidc_admin_client.get(index).context["app_list"]
    ]
    assert apps == [
        [(m["object_name"], m["perms"]) for m in app["models"]] for app in admin_client.get(index).context["app_list"]
    ]


# ---- agent keys ----------------------------------------------------------------------------


@pytest.fixture
def agent_key(namespace):
    key, _ = issue_agent_key(actor=SYSTEM, namespace="team-a", sandbox_id="sbx_1")
    return key


def test_key_list_and_page_show_an_agent_key(admin_client, agent_key, make_key):
    make_key()
    response = admin_client.get(reverse("admin:apikeys_apikey_changelist"))
    assert response.status_code == 200
    assert agent_key.key_id in response.content.decode()
    assert admin_client.get(reverse("admin:apikeys_apikey_change", args=[agent_key.pk])).status_code == 200


def test_revoke_action_revokes_an_agent_key(admin_client, agent_key):
    response = admin_client.post(
        reverse("admin:apikeys_apikey_changelist"),
        {"action": "revoke_selected", "_selected_action": [str(agent_key.pk)]},
        follow=True,  # back to the list, which shows the key and the outcome
    )
    assert response.status_code == 200
    assert [str(m) for m in response.context["messages"]] == ["Revoked 1 API key(s)."]
    agent_key.refresh_from_db()
    assert agent_key.state() == "revoked"
    assert AuditEvent.objects.filter(action="api_key.revoke", target=f"api_key:{agent_key.key_id}").exists()


def test_the_console_password_change_is_audited(client, admin_user):
    client.force_login(admin_user)
    data = {"old_password": "password", "new_password1": "a-new-Passw0rd-x", "new_password2": "a-new-Passw0rd-x"}
    response = client.post(reverse("admin:password_change"), data)
    assert response.status_code == 302
    event = AuditEvent.objects.get(action="user.password_change")
    assert (event.actor, event.target) == ("local:admin", "local:admin")
    assert "a-new-Passw0rd-x" not in str(event.changes)
