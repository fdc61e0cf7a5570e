"""The operator console: Django admin, with access decided by the principal.

Access follows `request.principal` (the one authentication middleware), not Django's
is_staff/permissions, so that admins who are not Django superusers (OIDC admins) get
the same console and non-admins get none of it. Only cookie sessions qualify: the
console is a browser UI whose history (LogEntry) and CSRF defence need a Django user;
API keys are for the RPC API.

Every ModelAdmin derives from ConsoleAdmin (checked when the app registry is ready). It is
read-only unless it declares which writes a service backs, and then saves only through
that service: the generic form.save()/delete() paths raise instead of writing.
"""

from django.contrib import admin
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.db import transaction

from audit.services import record
from controlplane.auth.principal import local_label
from controlplane.errors import Error

WRITES = frozenset({"add", "change", "delete"})


def is_console_admin(request) -> bool:
    principal = getattr(request, "principal", None)
    return bool(principal is not None and principal.is_authenticated and principal.admin and principal.via == "session")


class ControlPlaneAdminSite(admin.AdminSite):
    site_header = "Control plane"
    site_title = "Control plane"
    index_title = "Operator console"
    # The app list is one click away (Home); at 1280 px its 300 px are worth more to the tables.
    enable_nav_sidebar = False

    def has_permission(self, request):
        return is_console_admin(request)

    def password_change(self, request, extra_context=None):
        # The one console write that is not a model's: the break-glass account's own password.
        # Audited with the change, in one transaction.
        with transaction.atomic():
            response = super().password_change(request, extra_context)
            if request.method == "POST" and response.status_code == 302:
                user = local_label(request.user.get_username())
                record(actor=request.principal, action="user.password_change", target=user)
        return response


class PrincipalPermissions:
    """Permissions of a ModelAdmin or inline: viewing for console admins; writing only for
    the operations listed in `service_writes`, which a service function carries out."""

    service_writes: frozenset[str] = frozenset()

    def _may(self, request, operation: str) -> bool:
        return operation in self.service_writes and is_console_admin(request)

    def has_module_permission(self, request):
        return is_console_admin(request)

    def has_view_permission(self, request, obj=None):
        return is_console_admin(request)

    def has_add_permission(self, request, *args):
        return self._may(request, "add")

    def has_change_permission(self, request, obj=None):
        return self._may(request, "change")

    def has_delete_permission(self, request, obj=None):
        return self._may(request, "delete")


class ServiceRejected(Exception):
    """A service refused a console write; carries its Connect error to the form."""

    def __init__(self, error: Error):
        super().__init__(error.message)
        self.error = error


def through_service(function, **kwargs):
    """Calls a write service from a console view; its refusal becomes ServiceRejected."""
    try:
        return function(**kwargs)
    except Error as exc:
        raise ServiceRejected(exc) from exc


class ConsoleAdmin(PrincipalPermissions, admin.ModelAdmin):
    """Base of every ModelAdmin in the console.

    A subclass that writes lists the operations in `service_writes` and overrides save_model
    (and save_related, when it has inlines) to call the service through `through_service`.
    A refusal re-renders the form with the service's message and what the operator typed.
    """

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except ServiceRejected as rejected:
            # The view's transaction rolled back. Run it once more with the error planted in
            # the form: Django then renders everything the operator typed, with the message.
            request.console_service_error = rejected.error
            return super().changeform_view(request, object_id, form_url, extra_context)

    def get_form(self, request, obj=None, change=False, **kwargs):
        form_class = super().get_form(request, obj, change, **kwargs)
        error = getattr(request, "console_service_error", None)
        if error is None:
            return form_class

        class RejectedForm(form_class):
            def clean(self):
                super().clean()
                raise ValidationError(error.message, code=error.code.wire_name)

        return RejectedForm

    # The generic write paths: never reached by a read-only admin, and a writing subclass
    # must replace the ones it uses, so nothing is saved without its service and audit entry.
    def save_model(self, request, obj, form, change):
        raise ImproperlyConfigured(f"{type(self).__name__} saves without a service")

    def save_related(self, request, form, formsets, change):
        if formsets:
            raise ImproperlyConfigured(f"{type(self).__name__} saves related rows without a service")

    def delete_model(self, request, obj):
        raise ImproperlyConfigured(f"{type(self).__name__} deletes without a service")

    def delete_queryset(self, request, queryset):
        raise ImproperlyConfigured(f"{type(self).__name__} deletes without a service")


class ConsoleInline(PrincipalPermissions):
    """Mixin for inlines: read-only unless the parent's service writes the rows."""


def check_registry(site: admin.AdminSite) -> None:
    """Refuses a ModelAdmin that bypasses the principal-based base class."""
    for model, model_admin in site._registry.items():
        if not isinstance(model_admin, ConsoleAdmin):
            raise ImproperlyConfigured(f"the console's admin for {model._meta.label} must derive from ConsoleAdmin")
        if not model_admin.service_writes <= WRITES:
            raise ImproperlyConfigured(f"{type(model_admin).__name__}.service_writes: unknown operation")
        for inline in model_admin.inlines:
            if not issubclass(inline, ConsoleInline):
                raise ImproperlyConfigured(f"inline {inline.__name__} must derive from ConsoleInline")
