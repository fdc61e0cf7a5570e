from django.contrib.admin.apps import AdminConfig


class ControlPlaneAdminConfig(AdminConfig):
    """django.contrib.admin with the principal-aware site as admin.site."""

    default_site = "controlplane.admin_site.ControlPlaneAdminSite"
