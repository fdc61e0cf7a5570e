from django.db import models


class AuditEvent(models.Model):
    """Who did what, when: one row per change of keys or namespaces, from any path."""

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.CharField(max_length=300, help_text="e.g. user:alice, api_key:key_..., system:manage.py")
    action = models.CharField(max_length=64, db_index=True)
    target = models.CharField(max_length=300, help_text="e.g. namespace:team-a, api_key:key_...")
    namespace = models.CharField(max_length=63, blank=True, db_index=True)
    changes = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self):
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.actor} {self.action} {self.target}"
