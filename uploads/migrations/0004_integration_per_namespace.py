# Integrations move from one platform-wide row per integrationId to one row per
# (namespace, integrationId), so that an import in one namespace cannot rewrite what another
# namespace lists. Each old row is copied to every namespace whose uploads name it.

import django.db.models.deletion
from django.db import migrations, models


def copy_per_namespace(apps, schema_editor):
    Legacy = apps.get_model("uploads", "Integration")
    Scoped = apps.get_model("uploads", "ScopedIntegration")
    Upload = apps.get_model("uploads", "Upload")
    legacy = {row.integration_id: row for row in Legacy.objects.all()}
    if not legacy:
        return
    used = (
        Upload.objects.exclude(integration_id=None)
        .values_list("bucket__namespace_id", "integration_id")
        .distinct()
        .iterator()
    )
    fields = ["name", "oauth_client_id", "folder_behavior", "folder_link_url", "mode", "bucket_launcher_enabled"]
    Scoped.objects.bulk_create(
        [
            Scoped(namespace_id=namespace_id, integration_id=integration_id, **{f: getattr(legacy[integration_id], f) for f in fields})
            for namespace_id, integration_id in used
            if integration_id in legacy
        ],
        batch_size=1000,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("namespaces", "0001_initial"),
        ("uploads", "0003_cross_bucket_indexes"),
    ]

    operations = [
        migrations.CreateModel(
            name="ScopedIntegration",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("integration_id", models.UUIDField()),
                ("name", models.CharField(blank=True, max_length=256)),
                ("oauth_client_id", models.CharField(blank=True, max_length=256)),
                (
                    "folder_behavior",
                    models.PositiveSmallIntegerField(
                        choices=[(0, "Unspecified"), (1, "Mirror"), (2, "Flatten"), (3, "Link")], default=0
                    ),
                ),
                ("folder_link_url", models.TextField(blank=True)),
                (
                    "mode",
                    models.PositiveSmallIntegerField(
                        choices=[(0, "Unspecified"), (1, "Import"), (2, "Sync"), (3, "Export")], default=0
                    ),
                ),
                ("bucket_launcher_enabled", models.BooleanField(default=False)),
                (
                    "namespace",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="integrations",
                        to="namespaces.namespace",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("namespace", "integration_id"), name="uniq_integration_per_namespace"
                    )
                ],
            },
        ),
        migrations.RunPython(copy_per_namespace, migrations.RunPython.noop),
        migrations.DeleteModel(name="Integration"),
        migrations.RenameModel(old_name="ScopedIntegration", new_name="Integration"),
    ]
