from django.core.validators import RegexValidator
from django.db import models

from controlplane.auth import Role

# \A…\Z, not ^…$: "$" also matches before a trailing newline ("team-a\n").
DNS_LABEL = r"\A[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z"
dns_label_validator = RegexValidator(DNS_LABEL, "must be a DNS label: a-z, 0-9 and '-', alphanumeric at both ends")

QUOTA_FIELDS = ("max_sandboxes", "max_running_jobs", "max_workspaces", "max_environments", "max_egress_grants")


class Namespace(models.Model):
    name = models.CharField(max_length=63, unique=True, validators=[dns_label_validator])
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Quotas: NULL means no limit.
    max_sandboxes = models.PositiveIntegerField(null=True, blank=True)
    max_running_jobs = models.PositiveIntegerField(null=True, blank=True)
    max_workspaces = models.PositiveIntegerField(null=True, blank=True)
    max_environments = models.PositiveIntegerField(null=True, blank=True)
    max_egress_grants = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class GroupBinding(models.Model):
    """OIDC group → role in this namespace. Humans have no other membership."""

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="group_bindings")
    oidc_group = models.CharField(max_length=256)
    role = models.PositiveSmallIntegerField(choices=Role.choices())

    class Meta:
        ordering = ["oidc_group"]
        constraints = [models.UniqueConstraint(fields=["namespace", "oidc_group"], name="uniq_binding_per_group")]
        indexes = [models.Index(fields=["oidc_group"])]

    def __str__(self):
        return f"{self.oidc_group} → {Role(self.role).wire_name}"


class InternalTarget(models.Model):
    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="internal_targets")
    name = models.CharField(max_length=63, validators=[dns_label_validator])
    host = models.CharField(max_length=253)
    ports = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["namespace", "name"], name="uniq_target_name")]

    def __str__(self):
        return f"{self.name} ({self.host})"


class ImagePullSecret(models.Model):
    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="image_pull_secrets")
    registry = models.CharField(max_length=253)
    secret_ref = models.CharField(max_length=512, help_text="Reference into the secret store, never the credential.")

    class Meta:
        ordering = ["registry"]
        constraints = [models.UniqueConstraint(fields=["namespace", "registry"], name="uniq_pull_secret_registry")]

    def __str__(self):
        return self.registry
