from django.db import models
from django.utils import timezone

from controlplane.auth import Role
from namespaces.models import Namespace


class ApiKey(models.Model):
    class Kind(models.TextChoices):
        STANDARD = "standard", "Standard"
        AGENT = "agent", "Sandbox agent"
        RUNNER = "runner", "Runner"

    key_id = models.CharField(max_length=32, unique=True, editable=False)
    # SHA-256 of the plaintext; the plaintext itself is never stored.
    digest = models.CharField(max_length=64, unique=True, editable=False)
    hint = models.CharField(max_length=4, editable=False, help_text="Last four characters of the plaintext.")
    name = models.CharField(max_length=200)
    # Runner keys belong to no namespace (their runner lists the namespaces it serves).
    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="api_keys", null=True, blank=True)
    # Copy of namespace.name (namespaces are never renamed): authentication reads it without a join.
    namespace_name = models.CharField(max_length=63, editable=False, blank=True)
    # Agent and runner keys hold no role: agents are granted only their own sandbox and
    # workspace, runners only the runner API.
    role = models.PositiveSmallIntegerField(choices=Role.choices(), null=True, blank=True)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.STANDARD)
    # Agent keys: the sandbox holding the key, and the workspace it may use (public ids).
    sandbox_id = models.CharField(max_length=32, blank=True, editable=False, db_index=True)
    workspace_scope = models.CharField(max_length=32, blank=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    created_by = models.CharField(max_length=300, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "API key"
        # ListApiKeys' keyset order (created_at, id), within a namespace and across all.
        indexes = [
            models.Index(fields=["namespace", "created_at", "id"], name="apikeys_list_in_namespace"),
            models.Index(fields=["created_at", "id"], name="apikeys_list"),
        ]
        constraints = [
            models.CheckConstraint(
                name="apikey_role_agent_or_runner",
                condition=(
                    models.Q(kind="standard", role__isnull=False, sandbox_id="", workspace_scope="")
                    | models.Q(kind="agent", role__isnull=True) & ~models.Q(sandbox_id="")
                    | models.Q(kind="runner", role__isnull=True, namespace__isnull=True, sandbox_id="")
                ),
            )
        ]

    def __str__(self):
        return f"{self.key_id} ({self.name})"

    def state(self, now=None) -> str:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= (now or timezone.now()):
            return "expired"
        return "active"
