"""PostgreSQL: indexes the planner can choose well for ListUploads' filters (bench/UPLOADS.md).

- uploads_upload.facets: a STORED generated column, uploads_facets(tags, metadata_kvs,
  slug_folded), an IMMUTABLE function giving each upload's filterable facts as text
  ("t<len>:<tag>", "m<len>:<key>s<string>" / "...b<true|false>", "p<first 1..3 characters of
  the folded slug>"), with a GIN index. One containment test serves tags + metadata + slug
  prefix together; ANALYZE keeps per-element statistics of the column (target 1000), so the
  planner knows how many uploads match and picks the GIN bitmap or the ordered scan rightly.
  Stored, not an expression index: a scan that filters rows itself reads the array instead
  of calling the function (~10 us) per row. PostgreSQL computes it on every INSERT/UPDATE
  and COPY: write paths must not name the column (the model does not declare it).
- It supersedes the jsonb_path_ops GIN indexes of 0002 (their metadata index matched on
  "key" and "valueType" separately, so a filter read posting lists of ~every row).
- upl_bucket_path_sorts: (bucket, path) holding every sort key, so the path folder filter is
  an index-only scan of the folder's entries, then a top-N sort; it replaces upl_bucket_path.

Other databases filter with json_each and need none of this.
"""

from django.db import migrations

FACETS_FUNCTION = """
CREATE OR REPLACE FUNCTION uploads_facets(tags jsonb, kvs jsonb, slug_folded text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT ARRAY(
    SELECT 't' || length(t) || ':' || t
      FROM jsonb_array_elements_text(CASE WHEN jsonb_typeof(tags) = 'array' THEN tags ELSE '[]' END) t
    UNION ALL
    SELECT 'm' || length(kv->>'key') || ':' || (kv->>'key')
           || CASE kv->>'valueType' WHEN 'METADATA_VALUE_TYPE_STRING' THEN 's' || (kv->'value'->>'stringValue')
                                    ELSE 'b' || (kv->'value'->>'boolValue') END
      FROM jsonb_array_elements(CASE WHEN jsonb_typeof(kvs) = 'array' THEN kvs ELSE '[]' END) kv
     WHERE kv->>'valueType' IN ('METADATA_VALUE_TYPE_STRING', 'METADATA_VALUE_TYPE_BOOL')
    UNION ALL
    SELECT 'p' || left(slug_folded, n) FROM generate_series(1, least(3, length(slug_folded))) n
  )
$$
"""

CREATE = [
    FACETS_FUNCTION,
    "ALTER TABLE uploads_upload ADD COLUMN facets text[]"
    " GENERATED ALWAYS AS (uploads_facets(tags, metadata_kvs, slug_folded)) STORED",
    "ALTER TABLE uploads_upload ALTER COLUMN facets SET STATISTICS 1000",
    "CREATE INDEX upl_facets ON uploads_upload USING gin (facets)",
    "DROP INDEX IF EXISTS upl_tags_gin",
    "DROP INDEX IF EXISTS upl_metadata_gin",
    'CREATE INDEX upl_bucket_path_sorts ON uploads_upload (bucket_id, path text_pattern_ops)'
    ' INCLUDE (created_at, updated_at, slug, size_bytes, "order", upload_id)',
]
DROP = [
    "DROP INDEX IF EXISTS upl_bucket_path_sorts",
    "CREATE INDEX IF NOT EXISTS upl_tags_gin ON uploads_upload USING gin (tags jsonb_path_ops)",
    "CREATE INDEX IF NOT EXISTS upl_metadata_gin ON uploads_upload USING gin (metadata_kvs jsonb_path_ops)",
    "DROP INDEX IF EXISTS upl_facets",
    "ALTER TABLE uploads_upload DROP COLUMN IF EXISTS facets",
    "DROP FUNCTION IF EXISTS uploads_facets(jsonb, jsonb, text)",
]


def run(statements):
    def apply(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for statement in statements:
                schema_editor.execute(statement)

    return apply


class Migration(migrations.Migration):
    dependencies = [("uploads", "0004_integration_per_namespace")]

    operations = [
        migrations.RemoveIndex(model_name="upload", name="upl_bucket_path"),
        migrations.RunPython(run(CREATE), run(DROP)),
    ]
