from django.contrib.admin.apps import AdminConfig


class ControlPlaneAdminConfig(AdminConfig):
    """django.contrib.admin with the principal-aware site as admin.site."""

    default_site = "controlplane.admin_site.ControlPlaneAdminSite"

    def ready(self):
        super().ready()  # autodiscover: every app's admin module registers its models
        from django.contrib import admin
        from django.contrib.auth import get_user_model
        from django.contrib.auth.models import Group

        from .admin_site import check_registry
        from .auth import checks  # noqa: F401 (registers the deploy checks)

        # Local accounts are the break-glass superuser, managed with manage.py
        # (createsuperuser, changepassword); the console offers no unaudited way to add admins.
        for model in (get_user_model(), Group):
            if admin.site.is_registered(model):
                admin.site.unregister(model)
        check_registry(admin.site)
