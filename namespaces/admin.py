"""Namespaces in the operator console. Saving goes through namespaces.services, never form.save()."""

from django import forms
from django.contrib import admin
from django.contrib.admin.utils import construct_change_message
from django.core.exceptions import ValidationError
from django.db.models import Count

from controlplane.admin_site import PrincipalPermissions
from controlplane.errors import Error

from . import services
from .models import QUOTA_FIELDS, GroupBinding, ImagePullSecret, InternalTarget, Namespace


class PortsField(forms.CharField):
    """Ports typed as "5432, 8080"; stored as a list of integers."""

    def prepare_value(self, value):
        if isinstance(value, list | tuple):
            return ", ".join(str(port) for port in value)
        return value

    def to_python(self, value):
        text = super().to_python(value)
        try:
            return [int(part) for part in text.replace(",", " ").split()]
        except ValueError:
            raise ValidationError("Enter port numbers separated by commas.") from None


class InternalTargetForm(forms.ModelForm):
    ports = PortsField(required=False, help_text="e.g. 5432, 8080")

    class Meta:
        model = InternalTarget
        fields = ["name", "host", "ports"]


class GroupBindingInline(PrincipalPermissions, admin.TabularInline):
    model = GroupBinding
    extra = 1
    verbose_name = "group binding"


class InternalTargetInline(PrincipalPermissions, admin.TabularInline):
    model = InternalTarget
    form = InternalTargetForm
    extra = 1


class ImagePullSecretInline(PrincipalPermissions, admin.TabularInline):
    model = ImagePullSecret
    extra = 1


def _count(annotation: str, description: str):
    """A list column showing a count annotated by NamespaceAdmin.get_queryset."""

    @admin.display(description=description, ordering=annotation)
    def column(self, obj):
        return getattr(obj, annotation)

    return column


@admin.register(Namespace)
class NamespaceAdmin(PrincipalPermissions, admin.ModelAdmin):
    list_display = ["name", "binding_count", "target_count", "pull_secret_count", "api_key_count", "created_at"]
    search_fields = ["name"]
    date_hierarchy = "created_at"
    fieldsets = [(None, {"fields": ["name"]}), ("Quotas (empty means no limit)", {"fields": list(QUOTA_FIELDS)})]
    inlines = [GroupBindingInline, InternalTargetInline, ImagePullSecretInline]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                binding_count=Count("group_bindings", distinct=True),
                target_count=Count("internal_targets", distinct=True),
                pull_secret_count=Count("image_pull_secrets", distinct=True),
                api_key_count=Count("api_keys", distinct=True),
            )
        )

    binding_count = _count("binding_count", "group bindings")
    target_count = _count("target_count", "internal targets")
    pull_secret_count = _count("pull_secret_count", "pull secrets")
    api_key_count = _count("api_key_count", "API keys")

    def get_readonly_fields(self, request, obj=None):
        return ["name"] if obj is not None else []

    def has_delete_permission(self, request, obj=None):
        return False  # no service deletes namespaces, so neither does the console

    # ---- saving through the services -------------------------------------------------

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except ServiceRejected as rejected:
            # The view's transaction rolled back. Run it once more with the error planted in
            # the form: Django then renders everything the operator typed, with the message.
            request.namespace_service_error = rejected.error
            return super().changeform_view(request, object_id, form_url, extra_context)

    def get_form(self, request, obj=None, change=False, **kwargs):
        form_class = super().get_form(request, obj, change, **kwargs)
        error = getattr(request, "namespace_service_error", None)
        if error is None:
            return form_class

        class RejectedForm(form_class):
            def clean(self):
                super().clean()
                raise ValidationError(error.message, code=error.code.wire_name)

        return RejectedForm

    def save_model(self, request, obj, form, change):
        pass  # the service writes the namespace and its lists together, in save_related

    def save_related(self, request, form, formsets, change):
        lists = {formset.model: _rows(formset) for formset in formsets}
        fields = {
            "actor": request.principal,
            "groups": [services.Binding(r["oidc_group"], r["role"]) for r in lists[GroupBinding]],
            "internal_targets": [
                services.Target(r["name"], r["host"], tuple(r["ports"] or ())) for r in lists[InternalTarget]
            ],
            "image_pull_secrets": [services.PullSecret(r["registry"], r["secret_ref"]) for r in lists[ImagePullSecret]],
            "quotas": {field: form.cleaned_data.get(field) for field in QUOTA_FIELDS},
        }
        try:
            if change:
                namespace = services.update_namespace(name=form.instance.name, **fields)
            else:
                namespace = services.create_namespace(name=form.cleaned_data["name"], **fields)
        except Error as exc:
            raise ServiceRejected(exc) from exc
        # The admin's history entry and redirect need the saved row's identity.
        form.instance.pk = namespace.pk
        form.instance.created_at = namespace.created_at
        form.instance._state.adding = False

    def construct_change_message(self, request, form, formsets, add=False):
        # Inline formsets were never saved; the audit log holds the full before/after.
        return construct_change_message(form, None, add)


class ServiceRejected(Exception):
    def __init__(self, error: Error):
        super().__init__(error.message)
        self.error = error


def _rows(formset) -> list[dict]:
    """The inline rows that remain: filled in and not marked for deletion."""
    return [form.cleaned_data for form in formset.forms if form.cleaned_data and not form.cleaned_data.get("DELETE")]
