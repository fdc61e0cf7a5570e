"""PostgreSQL: every change to an API key row is announced on the channel `apikeys_changed`.

Each process's cache of resolved keys (apikeys.keycache) listens there and evicts the digest
it is sent, or everything after a TRUNCATE ("*"). A trigger catches every write path: the
services, the console, raw SQL, a namespace deletion's cascade. SQLite has no NOTIFY (and no
cache): nothing to do there.
"""

from django.db import migrations

CREATE = """
CREATE FUNCTION apikeys_apikey_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify('apikeys_changed', '*');
    ELSE
        PERFORM pg_notify('apikeys_changed', OLD.digest);
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER apikeys_apikey_notify_row AFTER UPDATE OR DELETE ON apikeys_apikey
    FOR EACH ROW EXECUTE FUNCTION apikeys_apikey_notify();
CREATE TRIGGER apikeys_apikey_notify_truncate AFTER TRUNCATE ON apikeys_apikey
    FOR EACH STATEMENT EXECUTE FUNCTION apikeys_apikey_notify();
"""

DROP = """
DROP TRIGGER IF EXISTS apikeys_apikey_notify_truncate ON apikeys_apikey;
DROP TRIGGER IF EXISTS apikeys_apikey_notify_row ON apikeys_apikey;
DROP FUNCTION IF EXISTS apikeys_apikey_notify();
"""


def _on_postgresql(sql):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):
    dependencies = [("apikeys", "0004_list_indexes")]

    operations = [migrations.RunPython(_on_postgresql(CREATE), _on_postgresql(DROP), elidable=False)]
