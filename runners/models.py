"""A runner: a process on a machine that runs containers, known by its key (kind RUNNER)."""

from django.db import models
from django.utils import timezone

from apikeys.models import ApiKey


class Runner(models.Model):
    runner_id = models.CharField(max_length=32, unique=True, editable=False)
    name = models.CharField(max_length=200)
    # The key outlives a revoked runner (ListRunners shows it revoked, the audit names it).
    key = models.OneToOneField(ApiKey, on_delete=models.PROTECT, related_name="runner", editable=False)
    # Names of the namespaces whose work it may acquire; empty: every namespace.
    namespaces = models.JSONField(default=list, blank=True)
    version = models.CharField(max_length=200, blank=True, editable=False, help_text="what the runner says it is")
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    created_by = models.CharField(max_length=300, blank=True, editable=False)
    # Written at most every RUNNER_LAST_SEEN_RESOLUTION_SECONDS: by a Heartbeat's own statement
    # (PostgreSQL), else per process by leases.note_seen.
    last_seen_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["created_at", "runner_id"], name="runners_list")]

    def __str__(self):
        return f"{self.runner_id} ({self.name})"

    @property
    def revoked(self) -> bool:
        return self.key.revoked_at is not None
