"""Read-only admin for containers resources: every change goes through the services (API),
which enforce quotas, revoke agent keys and write the audit log. Runners change the work's
state through the runner API (workloads.services.leases)."""

from django.contrib import admin

from controlplane.admin_site import ConsoleAdmin

from . import selectors
from .models import EgressEvent, EgressGrant, Environment, Job, Sandbox, Workspace

LOG_TAIL_BYTES = 4096


class ReadOnlyAdmin(ConsoleAdmin):
    list_filter = ["namespace"]
    list_select_related = ["namespace"]
    show_full_result_count = False


@admin.register(Job)
class JobAdmin(ReadOnlyAdmin):
    list_display = ["job_id", "namespace", "image", "state", "exit_code", "attempt", "created_at"]
    list_filter = ["namespace", "state"]
    search_fields = ["job_id", "image"]
    # Not env (values may be secrets) nor the lease digest (of no use to a person).
    readonly_fields = fields = [
        "job_id",
        "namespace",
        "image",
        "command",
        "state",
        "exit_code",
        "reason",
        "attempt",
        "timeout_seconds",
        "runner",
        "started_at",
        "finished_at",
        "created_at",
        "created_by",
        "log_tail",
    ]

    @admin.display(description="log (tail)")
    def log_tail(self, obj):
        page = selectors.job_logs(obj, max(obj.log_start, obj.log_size - LOG_TAIL_BYTES))
        return page.data.decode("utf-8", errors="replace") or "(no output)"


@admin.register(Sandbox)
class SandboxAdmin(ReadOnlyAdmin):
    # Ids only: a row of unbreakable ids must fit 1280 px whatever their glyphs (the workspace's
    # name is on its own page).
    list_display = ["sandbox_id", "namespace", "image", "state", "workspace_ref", "agent_key_id", "created_at"]
    list_select_related = ["namespace", "workspace", "agent_key"]
    search_fields = ["sandbox_id", "image"]
    exclude = ["app_key", "lease_digest"]  # the app key is readable through GetAppKey by operators
    readonly_fields = ["reason", "attempt", "runner"]

    @admin.display(description="workspace")
    def workspace_ref(self, obj):
        return obj.workspace.workspace_id if obj.workspace else None

    @admin.display(description="agent key")
    def agent_key_id(self, obj):
        return obj.agent_key.key_id if obj.agent_key else None


@admin.register(Environment)
class EnvironmentAdmin(ReadOnlyAdmin):
    list_display = ["environment_id", "namespace", "name", "image", "state", "updated_at"]
    readonly_fields = ["image_digest", "reason", "attempt", "runner"]
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
