"""Jobs, sandboxes, environments, workspaces and egress of a namespace.

Every resource has a public id (see ids.py) and belongs to one namespace; the namespace
row is also the lock that keeps concurrent creates within the quotas.
"""

from django.db import models
from django.utils import timezone

from apikeys.models import ApiKey
from namespaces.models import Namespace, dns_label_validator

from .ids import MAX_LENGTH


class NamespacedResource(models.Model):
    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    created_by = models.CharField(max_length=300, blank=True, help_text="e.g. api_key:key_..., user:alice")

    class Meta:
        abstract = True
        ordering = ["-id"]


class Job(NamespacedResource):
    class State(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    ACTIVE_STATES = (State.QUEUED, State.RUNNING)  # what max_running_jobs counts

    job_id = models.CharField(max_length=MAX_LENGTH, unique=True, editable=False)
    image = models.CharField(max_length=512)
    command = models.JSONField(default=list, blank=True)
    env = models.JSONField(default=dict, blank=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.QUEUED)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta(NamespacedResource.Meta):
        indexes = [models.Index(fields=["namespace", "state"])]

    def __str__(self):
        return self.job_id


class Workspace(NamespacedResource):
    workspace_id = models.CharField(max_length=MAX_LENGTH, unique=True, editable=False)
    name = models.CharField(max_length=63, validators=[dns_label_validator])

    class Meta(NamespacedResource.Meta):
        constraints = [models.UniqueConstraint(fields=["namespace", "name"], name="uniq_workspace_name")]

    def __str__(self):
        return f"{self.workspace_id} ({self.name})"


class Sandbox(NamespacedResource):
    sandbox_id = models.CharField(max_length=MAX_LENGTH, unique=True, editable=False)
    image = models.CharField(max_length=512)
    # PROTECT: a workspace in use by a sandbox cannot be deleted.
    workspace = models.ForeignKey(Workspace, on_delete=models.PROTECT, null=True, blank=True, related_name="sandboxes")
    # The agent key outlives the sandbox as a revoked row (ListApiKeys, audit).
    agent_key = models.OneToOneField(ApiKey, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    # The app's key is readable by operators by design (GetAppKey), so it is stored as is.
    app_key = models.CharField(max_length=64, editable=False)

    class Meta(NamespacedResource.Meta):
        verbose_name_plural = "sandboxes"

    def __str__(self):
        return self.sandbox_id


class Environment(NamespacedResource):
    class State(models.TextChoices):
        REGISTERED = "registered", "Registered"
        BUILDING = "building", "Building"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    environment_id = models.CharField(max_length=MAX_LENGTH, unique=True, editable=False)
    name = models.CharField(max_length=63, validators=[dns_label_validator])
    image = models.CharField(max_length=512)
    state = models.CharField(max_length=16, choices=State.choices, default=State.REGISTERED)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta(NamespacedResource.Meta):
        constraints = [models.UniqueConstraint(fields=["namespace", "name"], name="uniq_environment_name")]

    def __str__(self):
        return f"{self.environment_id} ({self.name})"


class EgressGrant(NamespacedResource):
    class Kind(models.TextChoices):
        HOST = "host", "Host"
        INTERNAL = "internal", "Internal target"

    grant_id = models.CharField(max_length=MAX_LENGTH, unique=True, editable=False)
    # Normalised target: host[:port] or an internal target's name (see services.egress).
    target = models.CharField(max_length=300)
    kind = models.CharField(max_length=16, choices=Kind.choices)

    class Meta(NamespacedResource.Meta):
        constraints = [models.UniqueConstraint(fields=["namespace", "target"], name="uniq_egress_target")]

    def __str__(self):
        return f"{self.grant_id} ({self.target})"


class EgressEvent(models.Model):
    """Append-only: grants given and revoked, and connections reported by sandbox agents."""

    class Kind(models.TextChoices):
        GRANTED = "granted", "Granted"
        REVOKED = "revoked", "Revoked"
        CONNECTION = "connection", "Connection"

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    target = models.CharField(max_length=300)
    # Ids as text: the grant or sandbox may be gone while its events stay.
    grant_id = models.CharField(max_length=MAX_LENGTH, blank=True)
    sandbox_id = models.CharField(max_length=MAX_LENGTH, blank=True)
    allowed = models.BooleanField(null=True, blank=True, help_text="connections only")
    actor = models.CharField(max_length=300)
    at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["namespace", "id"])]

    def __str__(self):
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.kind} {self.target}"
