"""Read-only admin for containers resources: every change goes through the services (API),
which enforce quotas, talk to the backends, revoke agent keys and write the audit log."""

from django.contrib import admin

from .models import EgressEvent, EgressGrant, Environment, Job, Sandbox, Workspace


class ReadOnlyAdmin(admin.ModelAdmin):
    list_filter = ["namespace"]
    list_select_related = ["namespace"]
    show_full_result_count = False

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Job)
class JobAdmin(ReadOnlyAdmin):
    list_display = ["job_id", "namespace", "image", "state", "created_at", "created_by"]
    list_filter = ["namespace", "state"]
    search_fields = ["job_id", "image"]


@admin.register(Sandbox)
class SandboxAdmin(ReadOnlyAdmin):
    list_display = ["sandbox_id", "namespace", "image", "workspace", "agent_key", "created_at", "created_by"]
    list_select_related = ["namespace", "workspace", "agent_key"]
    search_fields = ["sandbox_id", "image"]
    exclude = ["app_key"]  # readable through GetAppKey by operators, not on every admin page


@admin.register(Environment)
class EnvironmentAdmin(ReadOnlyAdmin):
    list_display = ["environment_id", "namespace", "name", "image", "state", "updated_at"]
    list_filter = ["namespace", "state"]
    search_fields = ["environment_id", "name", "image"]


@admin.register(Workspace)
class WorkspaceAdmin(ReadOnlyAdmin):
    list_display = ["workspace_id", "namespace", "name", "created_at", "created_by"]
    search_fields = ["workspace_id", "name"]


@admin.register(EgressGrant)
class EgressGrantAdmin(ReadOnlyAdmin):
    list_display = ["grant_id", "namespace", "target", "kind", "created_at", "created_by"]
    list_filter = ["namespace", "kind"]
    search_fields = ["grant_id", "target"]


@admin.register(EgressEvent)
class EgressEventAdmin(ReadOnlyAdmin):
    list_display = ["at", "namespace", "kind", "target", "allowed", "sandbox_id", "grant_id", "actor"]
    list_filter = ["namespace", "kind"]
    search_fields = ["target", "sandbox_id", "grant_id"]
