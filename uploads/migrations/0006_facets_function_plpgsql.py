"""PostgreSQL: uploads_facets() in PL/pgSQL, with the same result as 0005's SQL version.

The SQL version (ARRAY of three UNION ALL subqueries) is not inlinable, so every INSERT,
UPDATE and COPY ran a small query plan per row to compute the stored `facets` column:
~8 us per row, about a tenth of what COPY spends on an upload row. PL/pgSQL evaluates
each line below as a simple expression (no executor) and takes ~3.5 us.

The stored values need no rewrite: the output is identical, element for element and in
order (tests/test_uploads_facets.py runs both versions on the same random inputs).
"""

from importlib import import_module

from django.db import migrations

FACETS_FUNCTION = """
CREATE OR REPLACE FUNCTION uploads_facets(tags jsonb, kvs jsonb, slug_folded text) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  facets text[] := '{}';
  kv jsonb;
  item text;
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
  -- least() ignores NULL: a NULL slug gives three NULL elements, as 0005's version did.
  FOR n IN 1 .. least(3, length(slug_folded)) LOOP
    facets := facets || ('p' || left(slug_folded, n));
  END LOOP;
  RETURN facets;
END
$$
"""

_0005 = import_module("uploads.migrations.0005_facets_and_covering_path")
PREVIOUS = _0005.FACETS_FUNCTION


class Migration(migrations.Migration):
    dependencies = [("uploads", "0005_facets_and_covering_path")]

    # 0005's helper: runs the statements on PostgreSQL only.
    operations = [migrations.RunPython(_0005.run([FACETS_FUNCTION]), _0005.run([PREVIOUS]))]
