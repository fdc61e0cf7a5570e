"""Principal labels: `user:<name>` becomes `local:<username>` or `oidc:<issuer>#<subject>` (issue 22).

A local account and an OIDC person whose subject was the same name shared `user:<name>`, in the
audit log, in createdBy and as the owner of requestIds (so one could replay the other's). The
stored labels are rewritten by what can be known of each name:

- a local account of that name exists, and no OIDC person of that name ever signed in to the
  console (no `oidc:<name>` Django user): `local:<name>`;
- no local account of that name: the OIDC person, `oidc:<OIDC_ISSUER>#<name>`;
- both: ambiguous. Audit and createdBy rows keep `user:<name>` (nothing made up); the requestId
  records of that label are deleted (a retry of one becomes a new create, never the other's).

A person who only ever called with bearer tokens left no Django user: if such a subject equals a
local account's name, that history is attributed to the local account. The rewrite is a handful of
UPDATEs per distinct label, not per row.
"""

import hashlib

from django.conf import settings
from django.db import migrations

# (app label, model, field) of every stored principal label.
LABELS = [
    ("audit", "AuditEvent", "actor"),
    ("apikeys", "ApiKey", "created_by"),
    ("idempotency", "RequestRecord", "principal"),
    *(("containers", model, "created_by") for model in ("Job", "Workspace", "Sandbox", "Environment", "EgressGrant")),
    ("containers", "EgressEvent", "actor"),
]
MAX_LABEL = 300


def _oidc_label(issuer: str, subject: str) -> str:
    # As controlplane.auth.principal.oidc_label did when this migration was written.
    label = f"oidc:{issuer}#{subject}" if issuer else f"oidc:{subject}"
    if len(label) > MAX_LABEL:
        label = "oidc:sha256:" + hashlib.sha256(f"{issuer}#{subject}".encode()).hexdigest()
    return label


def forwards(apps, schema_editor):
    User = apps.get_model(settings.AUTH_USER_MODEL)
    usernames = set(User.objects.values_list("username", flat=True))
    issuer = settings.OIDC_ISSUER

    def relabel(label: str) -> str | None:
        """The new label; None when ambiguous."""
        name = label.removeprefix("user:")
        if name not in usernames:
            return _oidc_label(issuer, name)
        return None if f"oidc:{name}" in usernames else f"local:{name}"

    for app_label, model_name, field in LABELS:
        model = apps.get_model(app_label, model_name)
        old = model.objects.filter(**{f"{field}__startswith": "user:"})
        for label in set(old.values_list(field, flat=True)):
            new = relabel(label)
            rows = model.objects.filter(**{field: label})
            if new is not None:
                rows.update(**{field: new})
            elif model_name == "RequestRecord":
                rows.delete()
    # The console's password change names the local account as its target.
    AuditEvent = apps.get_model("audit", "AuditEvent")
    for label in set(AuditEvent.objects.filter(action="user.password_change").values_list("target", flat=True)):
        if label.startswith("user:"):
            AuditEvent.objects.filter(action="user.password_change", target=label).update(
                target="local:" + label.removeprefix("user:")
            )


def backwards(apps, schema_editor):
    # oidc:sha256:… labels cannot be reversed; they stay as they are.
    for app_label, model_name, field in LABELS:
        model = apps.get_model(app_label, model_name)
        for label in set(model.objects.filter(**{f"{field}__regex": r"^(local|oidc):"}).values_list(field, flat=True)):
            if label.startswith("oidc:sha256:"):
                continue
            name = label.split(":", 1)[1]
            if label.startswith("oidc:") and "#" in name:
                name = name.split("#", 1)[1]
            model.objects.filter(**{field: label}).update(**{field: f"user:{name}"})
    AuditEvent = apps.get_model("audit", "AuditEvent")
    for label in set(AuditEvent.objects.filter(action="user.password_change").values_list("target", flat=True)):
        if label.startswith("local:"):
            AuditEvent.objects.filter(action="user.password_change", target=label).update(
                target="user:" + label.removeprefix("local:")
            )


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0001_initial"),
        ("apikeys", "0005_notify_key_changes"),
        ("idempotency", "0001_initial"),
        ("containers", "0003_list_keyset_indexes"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [migrations.RunPython(forwards, backwards, elidable=False)]
