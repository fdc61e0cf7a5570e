"""PostgreSQL: writing only last_used_at no longer announces the key as changed.

Every key in use has last_used_at written about once a minute (API_KEY_LAST_USED_RESOLUTION_
SECONDS), and each announcement evicted the key from every process's cache (and kept any read
in flight from being stored): steady traffic missed the cache once a minute per key and
process, and 50 idle runners' keys kept the caches churning. Nothing the cache answers with
depends on last_used_at. Deletes and every other update are announced as before.
"""

from django.db import migrations

CREATE = """
DROP TRIGGER IF EXISTS apikeys_apikey_notify_row ON apikeys_apikey;
CREATE TRIGGER apikeys_apikey_notify_delete AFTER DELETE ON apikeys_apikey
    FOR EACH ROW EXECUTE FUNCTION apikeys_apikey_notify();
CREATE TRIGGER apikeys_apikey_notify_update AFTER UPDATE ON apikeys_apikey
    FOR EACH ROW
    WHEN ((to_jsonb(OLD) - 'last_used_at') IS DISTINCT FROM (to_jsonb(NEW) - 'last_used_at'))
    EXECUTE FUNCTION apikeys_apikey_notify();
"""

DROP = """
DROP TRIGGER IF EXISTS apikeys_apikey_notify_update ON apikeys_apikey;
DROP TRIGGER IF EXISTS apikeys_apikey_notify_delete ON apikeys_apikey;
CREATE TRIGGER apikeys_apikey_notify_row AFTER UPDATE OR DELETE ON apikeys_apikey
    FOR EACH ROW EXECUTE FUNCTION apikeys_apikey_notify();
"""


def _on_postgresql(sql):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):
    dependencies = [("apikeys", "0006_runner_keys")]

    operations = [migrations.RunPython(_on_postgresql(CREATE), _on_postgresql(DROP), elidable=False)]
