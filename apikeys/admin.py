"""API keys in the operator console: listed, issued and revoked through apikeys.services only."""

from datetime import timedelta

from django import forms
from django.contrib import admin, messages
from django.db.models import Q
from django.template.response import TemplateResponse
from django.urls import path
from django.utils import timezone
from django.utils.cache import add_never_cache_headers

from controlplane.admin_site import ConsoleAdmin, is_console_admin
from controlplane.auth import Role
from controlplane.errors import Error
from namespaces.models import Namespace

from . import services
from .models import ApiKey


class StateFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request, model_admin):
        return [("active", "Active"), ("revoked", "Revoked"), ("expired", "Expired")]

    def queryset(self, request, queryset):
        now = timezone.now()
        expired = Q(revoked_at__isnull=True, expires_at__lte=now)
        if self.value() == "active":
            return queryset.filter(revoked_at__isnull=True).exclude(expired)
        if self.value() == "revoked":
            return queryset.filter(revoked_at__isnull=False)
        if self.value() == "expired":
            return queryset.filter(expired)
        return queryset


class IssueApiKeyForm(forms.Form):
    namespace = forms.ModelChoiceField(Namespace.objects.order_by("name"), to_field_name="name")
    name = forms.CharField(max_length=services.MAX_NAME_LENGTH, help_text="A label shown in listings.")
    role = forms.TypedChoiceField(choices=Role.choices(), coerce=int, help_text="An ADMIN key is admin everywhere.")
    expires_in_days = forms.IntegerField(
        min_value=1, max_value=3650, required=False, help_text="Leave empty for a key that does not expire."
    )


@admin.register(ApiKey)
class ApiKeyAdmin(ConsoleAdmin):
    """Keys change only through the services: issue_view and the revoke action."""

    list_display = [
        "key_id",
        "name",
        "namespace",
        "role_name",
        "created_at",
        "last_used_at",
        "expires_at",
        "state",
    ]
    list_filter = ["namespace", "role", StateFilter, "kind"]
    list_select_related = ["namespace"]
    search_fields = ["key_id", "name"]

    def get_queryset(self, request):
        # Runner keys are shown, issued and revoked with their runners (runners.admin).
        return super().get_queryset(request).exclude(kind=ApiKey.Kind.RUNNER)

    date_hierarchy = "created_at"
    fields = ["key_id", "name", "namespace", "role", "kind", "hint", "created_by", "created_at"]
    fields += ["last_used_at", "expires_at", "revoked_at"]
    actions = ["revoke_selected"]

    @admin.display(description="role", ordering="role")
    def role_name(self, obj):
        # Agent keys hold no role (only their sandbox and workspace). The short word, as cpctl
        # shows it: ROLE_OPERATOR cost the list the width its STATE column needed at 1280 px.
        return Role(obj.role).name.lower() if obj.role is not None else "agent"

    @admin.display(description="state")
    def state(self, obj):
        return obj.state()

    def has_revoke_permission(self, request):
        return is_console_admin(request)

    @admin.action(description="Revoke selected keys", permissions=["revoke"])
    def revoke_selected(self, request, queryset):
        revoked = 0
        for key_id in queryset.filter(revoked_at__isnull=True).values_list("key_id", flat=True):
            try:
                services.revoke_api_key(actor=request.principal, key_id=key_id)
            except Error as exc:
                self.message_user(request, f"{key_id}: {exc.message}", messages.ERROR)
            else:
                revoked += 1
        self.message_user(request, f"Revoked {revoked} API key(s).", messages.SUCCESS)

    # ---- issuing -----------------------------------------------------------------------

    def get_urls(self):
        issue = path("issue/", self.admin_site.admin_view(self.issue_view), name="apikeys_apikey_issue")
        return [issue, *super().get_urls()]

    def issue_view(self, request):
        form = IssueApiKeyForm(request.POST or None, initial={"namespace": request.GET.get("namespace")})
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            days = data["expires_in_days"]
            try:
                key, plaintext = services.issue_api_key(
                    actor=request.principal,
                    namespace=data["namespace"].name,
                    name=data["name"],
                    role=data["role"],
                    expires_at=timezone.now() + timedelta(days=days) if days else None,
                )
            except Error as exc:
                form.add_error(None, exc.message)
            else:
                return self._issued_response(request, key, plaintext)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Issue API key",
            "form": form,
        }
        return TemplateResponse(request, "admin/apikeys/apikey/issue.html", context)

    def _issued_response(self, request, key, plaintext):
        # Rendered straight into this response: the plaintext never reaches the session,
        # the messages framework or any cache, and reloading cannot show it again.
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "API key issued",
            "key": key,
            "role": Role(key.role).wire_name,
            "plaintext": plaintext,
        }
        response = TemplateResponse(request, "admin/apikeys/apikey/issued.html", context)
        add_never_cache_headers(response)
        return response
