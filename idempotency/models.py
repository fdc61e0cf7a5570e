from django.db import models
from django.utils import timezone


class RequestRecord(models.Model):
    """A creating call made with a requestId (AIP-155): what it created, for its retries.

    One row per (principal, method, requestId): the unique constraint is what makes
    concurrent retries create exactly one resource. Kept REQUEST_ID_RETENTION_HOURS at
    least; `manage.py purge_request_ids` deletes older rows.
    """

    principal = models.CharField(max_length=300, help_text="Principal.describe(): api_key:..., user:...")
    method = models.CharField(max_length=100, help_text="the creating operation, e.g. RunJob")
    request_id = models.CharField(max_length=128)
    # HMAC-SHA-256 of the request's fields, so a reused id with a different request is refused.
    fingerprint = models.CharField(max_length=64)
    # What the call created (a public id), returned again to retries.
    result = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["principal", "method", "request_id"], name="uniq_request_id_per_principal")
        ]

    def __str__(self):
        return f"{self.method} {self.request_id} → {self.result}"
