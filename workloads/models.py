"""Jobs, sandboxes, environments, workspaces and egress of a namespace.

Every resource has a public id (see ids.py) and belongs to one namespace; the namespace
row is also the lock that keeps concurrent creates within the quotas.
"""

from django.db import models
from django.utils import timezone

from apikeys.models import ApiKey
from namespaces.models import Namespace, dns_label_validator

from .ids import MAX_LENGTH


def keyset_index(model: str, public_id: str) -> models.Index:
    """The List* keyset (selectors.KEYSETS): a namespace's rows newest first, ties by public id,
    so the whole ORDER BY is served by the index (no sort, not even an incremental one)."""
    return models.Index(fields=["namespace", "created_at", public_id], name=f"containers_{model}_keyset")


class NamespacedResource(models.Model):
    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    created_by = models.CharField(max_length=300, blank=True, help_text="e.g. api_key:key_..., user:alice")

    class Meta:
        abstract = True
        ordering = ["-id"]


class Leased(models.Model):
    """Work a runner may lease (workloads.services.leases): who holds it, until when, how often.

    A lease is held while lease_expires_at is set. lease_digest (SHA-256 of the token the
    runner proves it with) stays after the lease ends, so a retried FinishWork is recognised;
    `result` is the outcome the runner reported."""

    runner = models.ForeignKey("runners.Runner", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    lease_digest = models.CharField(max_length=64, blank=True, editable=False)
    lease_expires_at = models.DateTimeField(null=True, blank=True, editable=False)
    # Leases given so far (a released lease gives its attempt back).
    attempt = models.PositiveIntegerField(default=0, editable=False)
    cancel_requested = models.BooleanField(default=False, editable=False)
    result = models.CharField(max_length=16, blank=True, editable=False)
    # Why it failed, was cancelled or stopped: a short human sentence.
    reason = models.CharField(max_length=1000, blank=True, editable=False)

    class Meta:
        abstract = True


class Job(NamespacedResource, Leased):
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
    timeout_seconds = models.PositiveIntegerField(default=0, help_text="0: no limit")
    exit_code = models.IntegerField(null=True, blank=True, editable=False)
    started_at = models.DateTimeField(null=True, blank=True, editable=False)
    finished_at = models.DateTimeField(null=True, blank=True, editable=False)
    # Bytes of output ever appended (the next offset), and the first one still kept.
    log_size = models.BigIntegerField(default=0, editable=False)
    log_start = models.BigIntegerField(default=0, editable=False)

    class Meta(NamespacedResource.Meta):
        indexes = [
            keyset_index("job", "job_id"),
            models.Index(fields=["namespace", "state"]),
            # The queue (state, then oldest first) and the reaper (state, lease expiry).
            models.Index(fields=["state", "id"], name="containers_job_queue"),
            models.Index(fields=["state", "lease_expires_at"], name="containers_job_leases"),
        ]

    def __str__(self):
        return self.job_id


class Workspace(NamespacedResource):
    workspace_id = models.CharField(max_length=MAX_LENGTH, unique=True, editable=False)
    name = models.CharField(max_length=63, validators=[dns_label_validator])

    class Meta(NamespacedResource.Meta):
        indexes = [keyset_index("workspace", "workspace_id")]
        constraints = [models.UniqueConstraint(fields=["namespace", "name"], name="uniq_workspace_name")]

    def __str__(self):
        return f"{self.workspace_id} ({self.name})"


class Sandbox(NamespacedResource, Leased):
    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        STOPPED = "stopped", "Stopped"
        FAILED = "failed", "Failed"

    ACTIVE_STATES = (State.PENDING, State.RUNNING)  # what max_sandboxes counts

    sandbox_id = models.CharField(max_length=MAX_LENGTH, unique=True, editable=False)
    image = models.CharField(max_length=512)
    # PROTECT: a workspace in use by a sandbox cannot be deleted.
    workspace = models.ForeignKey(Workspace, on_delete=models.PROTECT, null=True, blank=True, related_name="sandboxes")
    # The agent key outlives the sandbox as a revoked row (ListApiKeys, audit).
    agent_key = models.OneToOneField(ApiKey, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    # The app's key is readable by operators by design (GetAppKey), so it is stored as is.
    app_key = models.CharField(max_length=64, editable=False)
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)

    class Meta(NamespacedResource.Meta):
        verbose_name_plural = "sandboxes"
        indexes = [
            keyset_index("sandbox", "sandbox_id"),
            models.Index(fields=["state", "id"], name="containers_sandbox_queue"),
            models.Index(fields=["lease_expires_at"], name="containers_sandbox_leases"),
        ]

    def __str__(self):
        return self.sandbox_id


class Environment(NamespacedResource, Leased):
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
    image_digest = models.CharField(max_length=200, blank=True, editable=False)

    class Meta(NamespacedResource.Meta):
        indexes = [
            keyset_index("environment", "environment_id"),
            models.Index(fields=["state", "id"], name="containers_environment_queue"),
            models.Index(fields=["lease_expires_at"], name="containers_environment_leases"),
        ]
        constraints = [models.UniqueConstraint(fields=["namespace", "name"], name="uniq_environment_name")]

    def __str__(self):
        return f"{self.environment_id} ({self.name})"


class JobLogChunk(models.Model):
    """A piece of a job's output: bytes [offset, offset + len(data)) of the whole log."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="+")
    offset = models.BigIntegerField()
    data = models.BinaryField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["job", "offset"], name="uniq_job_log_chunk")]

    def __str__(self):
        return f"{self.job_id}@{self.offset}"


class EgressGrant(NamespacedResource):
    class Kind(models.TextChoices):
        HOST = "host", "Host"
        INTERNAL = "internal", "Internal target"

    grant_id = models.CharField(max_length=MAX_LENGTH, unique=True, editable=False)
    # Normalised target: host[:port] or an internal target's name (see services.egress).
    target = models.CharField(max_length=300)
    kind = models.CharField(max_length=16, choices=Kind.choices)

    class Meta(NamespacedResource.Meta):
        indexes = [keyset_index("egressgrant", "grant_id")]
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
        indexes = [models.Index(fields=["namespace", "id"]), models.Index(fields=["namespace", "at", "id"])]

    def __str__(self):
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.kind} {self.target}"


class JobEventCounter(models.Model):
    """The last sequence number of a namespace's job change log (JobEvent.seq). Writers take
    its row lock until they commit, so a namespace's changes commit in sequence order and a
    watcher reading past its token never skips one still uncommitted."""

    namespace = models.OneToOneField(Namespace, on_delete=models.CASCADE, primary_key=True, related_name="+")
    last = models.BigIntegerField(default=0)

    def __str__(self):
        return f"{self.namespace_id}#{self.last}"


class JobEvent(models.Model):
    """One change of a job, as WatchJobs streams it: the whole job after the change.

    Kept JOBS_WATCH_RETENTION_SECONDS (workloads.services.job_events.trim)."""

    class Type(models.TextChoices):
        ADDED = "added", "Added"
        MODIFIED = "modified", "Modified"

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="+")
    seq = models.BigIntegerField()
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="+")
    type = models.CharField(max_length=8, choices=Type.choices)
    # containers.api.v1.Job, serialized, with env names but no values (those stay on the job).
    snapshot = models.BinaryField()
    at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["namespace", "seq"], name="uniq_job_event_seq")]
        indexes = [models.Index(fields=["at"], name="containers_jobevent_at")]

    def __str__(self):
        return f"{self.namespace_id}#{self.seq} {self.type}"
