"""The audit log in the operator console: read-only; rows are written only by audit.services.record."""

import json

from django.contrib import admin
from django.utils.html import format_html

from controlplane.admin_site import ConsoleAdmin

from .models import AuditEvent


@admin.register(AuditEvent)
class AuditEventAdmin(ConsoleAdmin):
    list_display = ["at", "actor", "action", "target", "namespace", "changes_summary"]
    list_filter = ["action", "namespace"]
    search_fields = ["actor", "target", "namespace", "action"]
    date_hierarchy = "at"
    fields = ["at", "actor", "action", "target", "namespace", "changes_pretty"]
    readonly_fields = fields

    @admin.display(description="changes")
    def changes_summary(self, obj):
        text = json.dumps(obj.changes, sort_keys=True)
        return text if len(text) <= 120 else text[:119] + "…"

    @admin.display(description="changes")
    def changes_pretty(self, obj):
        return format_html("<pre>{}</pre>", json.dumps(obj.changes, indent=2, sort_keys=True))
