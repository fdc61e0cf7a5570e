"""The operator console: Django admin, with access decided by the principal.

Access follows `request.principal` (the one authentication middleware), not Django's
is_staff/permissions, so that admins who are not Django superusers (OIDC admins) get
the same console and non-admins get none of it. Only cookie sessions qualify: the
console is a browser UI whose history (LogEntry) and CSRF defence need a Django user;
API keys are for the RPC API.
"""

from django.contrib import admin


def is_console_admin(request) -> bool:
    principal = getattr(request, "principal", None)
    return bool(principal is not None and principal.is_authenticated and principal.admin and principal.via == "session")


class ControlPlaneAdminSite(admin.AdminSite):
    site_header = "Control plane"
    site_title = "Control plane"
    index_title = "Operator console"

    def has_permission(self, request):
        return is_console_admin(request)


class PrincipalPermissions:
    """ModelAdmin mixin: view/add/change/delete all follow the principal.

    Subclasses turn individual operations off (returning False) where no service backs them.
    """

    def has_module_permission(self, request):
        return is_console_admin(request)

    def has_view_permission(self, request, obj=None):
        return is_console_admin(request)

    def has_add_permission(self, request, *args):
        return is_console_admin(request)

    def has_change_permission(self, request, obj=None):
        return is_console_admin(request)

    def has_delete_permission(self, request, obj=None):
        return is_console_admin(request)


class ReadOnlyPrincipalPermissions(PrincipalPermissions):
    """For models that change only through a service's own views and actions, never the generic forms."""

    def has_add_permission(self, request, *args):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
