"""PostgreSQL: slug-prefix pairs among the facets, so a slug prefix combined with tags or
metadata is one small GIN intersection (bench/UPLOADS.md, "Pair facets").

GIN intersects an AND of entries by walking every posting of its rarest one and skipping
through the others: tags ["finance"] + status=draft + slug "re" decoded ~400,000 postings
of upl_facets for 1,467 matches at a million uploads. Each row's 2-character slug prefix
facet paired with each of its tag and metadata facets (~5 more elements per row) makes the
rare thing an entry: "re"+finance has ~6,000 postings, "re"+draft ~18,000. A longer prefix
asks for the same pairs, then `slug_folded LIKE` on the rows they give.

- A pair is "<length of the prefix facet>:<prefix facet><other facet>", so "3:pre" and then
  the other facet: the length delimits the first part, and the leading digit keeps pairs
  apart from the single facets (page_query.facet_pair builds the same text).
- In the stored column, not in an expression index: a scan that filters rows itself
  (the ordered scan, when the filter is not selective) reads the array rather than
  computing pairs per row (~20 us), and facets' own statistics (target 1000) count the
  pairs as they count the single facets.
- Only the 2-character prefix is paired: a 1-character one is too common to narrow much,
  and pairing the 3-character one too cost the COPY floor 17-19% instead of 5-8%
  (bench/INGEST.md).

The column is dropped and added again (PostgreSQL 15 cannot change a generation
expression): one table rewrite that computes every row's facets, then the GIN index and
the column's statistics, in one transaction (at a million uploads: ~75 s). Then a VACUUM,
outside it: the rewritten table has no visibility map, and without one every index-only
scan (the page step, the path folder filter) reads the heap until autovacuum comes by.
"""

from importlib import import_module

from django.db import migrations, transaction

FACETS_FUNCTION = """
CREATE OR REPLACE FUNCTION uploads_facets(tags jsonb, kvs jsonb, slug_folded text) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  facets text[] := '{}';
  kv jsonb;
  item text;
  others int;
BEGIN
  IF jsonb_typeof(tags) = 'array' THEN
    FOR i IN 0 .. jsonb_array_length(tags) - 1 LOOP
      item := tags ->> i;
      facets := facets || ('t' || length(item) || ':' || item);
    END LOOP;
  END IF;
  IF jsonb_typeof(kvs) = 'array' THEN
    FOR i IN 0 .. jsonb_array_length(kvs) - 1 LOOP
      kv := kvs -> i;
      item := kv ->> 'valueType';
      IF item = 'METADATA_VALUE_TYPE_STRING' THEN
        facets := facets || ('m' || length(kv ->> 'key') || ':' || (kv ->> 'key') || 's' || (kv -> 'value' ->> 'stringValue'));
      ELSIF item = 'METADATA_VALUE_TYPE_BOOL' THEN
        facets := facets || ('m' || length(kv ->> 'key') || ':' || (kv ->> 'key') || 'b' || (kv -> 'value' ->> 'boolValue'));
      END IF;
    END LOOP;
  END IF;
  others := cardinality(facets);
  -- least() ignores NULL: a NULL slug gives three NULL elements, as 0005's version did.
  FOR n IN 1 .. least(3, length(slug_folded)) LOOP
    facets := facets || ('p' || left(slug_folded, n));
  END LOOP;
  IF length(slug_folded) >= 2 THEN
    item := 'p' || left(slug_folded, 2);
    FOR i IN 1 .. others LOOP
      facets := facets || ('3:' || item || facets[i]);
    END LOOP;
  END IF;
  RETURN facets;
END
$$
"""


def rebuild_column(function: str) -> list[str]:
    return [
        function,
        "ALTER TABLE uploads_upload DROP COLUMN facets",  # and its index
        "ALTER TABLE uploads_upload ADD COLUMN facets text[]"
        " GENERATED ALWAYS AS (uploads_facets(tags, metadata_kvs, slug_folded)) STORED",
        "ALTER TABLE uploads_upload ALTER COLUMN facets SET STATISTICS 1000",
        "CREATE INDEX upl_facets ON uploads_upload USING gin (facets)",
        "ANALYZE uploads_upload (facets)",  # the new column has no statistics yet
    ]


def rebuild(function: str):
    def apply(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        with transaction.atomic(using=schema_editor.connection.alias):
            for statement in rebuild_column(function):
                schema_editor.execute(statement)
        schema_editor.execute("VACUUM uploads_upload")

    return apply


PREVIOUS = import_module("uploads.migrations.0006_facets_function_plpgsql").FACETS_FUNCTION


class Migration(migrations.Migration):
    atomic = False  # VACUUM cannot run in a transaction; the rewrite has its own
    dependencies = [("uploads", "0006_facets_function_plpgsql")]

    operations = [migrations.RunPython(rebuild(FACETS_FUNCTION), rebuild(PREVIOUS))]
