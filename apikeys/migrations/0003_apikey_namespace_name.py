from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def copy_namespace_names(apps, schema_editor):
    ApiKey = apps.get_model("apikeys", "ApiKey")
    Namespace = apps.get_model("namespaces", "Namespace")
    ApiKey.objects.update(namespace_name=Subquery(Namespace.objects.filter(pk=OuterRef("namespace_id")).values("name")[:1]))


class Migration(migrations.Migration):
    dependencies = [
        ("apikeys", "0002_agent_scope"),
        ("namespaces", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="apikey",
            name="namespace_name",
            field=models.CharField(default="", editable=False, max_length=63),
            preserve_default=False,
        ),
        migrations.RunPython(copy_namespace_names, migrations.RunPython.noop),
    ]
