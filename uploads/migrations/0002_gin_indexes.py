"""PostgreSQL only: GIN indexes for the tags and metadata filters (`@>`), and no
varchar_pattern_ops copies of the string keys (Django adds them for LIKE on primary and
foreign keys; nothing here filters keys with LIKE, and each costs time on every insert).

Other databases filter the JSON columns with json_each and need no index here.
"""

from django.db import migrations

GIN = [
    ("upl_tags_gin", "tags"),
    ("upl_metadata_gin", "metadata_kvs"),
]


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, column in GIN:
        schema_editor.execute(f"CREATE INDEX {name} ON uploads_upload USING gin ({column} jsonb_path_ops)")
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = ANY(%s) AND indexname LIKE %s",
            [["uploads_upload", "uploads_alias", "uploads_metaupload"], "%\\_like"],
        )
        for (name,) in cursor.fetchall():
            schema_editor.execute(f'DROP INDEX "{name}"')


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, _ in GIN:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [("uploads", "0001_initial")]

    operations = [migrations.RunPython(create, drop)]
