"""Hot reads are planned once per connection: controlplane.precompiled.prepared, and its settings."""

import sys
import uuid

from django.db import connection
from django.db.models import F

from controlplane.precompiled import PrecompiledQuery, prepared
from namespaces.models import Namespace
from tests.controlplane.test_config import POOLED_POSTGRES, run
from tests.support.roundtrips import RoundTrips


def probe():
    """A PrecompiledQuery whose SQL no other test runs (a column alias of its own), so that its
    first execution on this session's connection is the first ever."""
    alias = f"probe_{uuid.uuid4().hex}"

    def build(name):
        return Namespace.objects.filter(name=name).order_by().annotate(**{alias: F("max_sandboxes")})

    return PrecompiledQuery(lambda name: build(name).values_list("name", alias), "name"), alias, build


def server_prepared(fragment: str) -> list[str]:
    """Statements this session holds prepared on the server (PostgreSQL) that contain `fragment`."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [sql for (sql,) in cursor.fetchall() if fragment in sql]


def test_a_hot_read_is_prepared_at_its_first_execution_in_one_round_trip(db, namespace, other_namespace):
    query, alias, build = probe()
    with RoundTrips() as first:
        assert query.rows(name="team-a") == [("team-a", None)]
    with RoundTrips() as second:
        assert query.rows(name="team-b") == [("team-b", None)]
    assert query.rows(name="nowhere") == []
    with prepared():  # any read in the block: ORM querysets too
        assert list(build("team-b").values_list(alias, "name")) == [(None, "team-b")]
    assert len(first.statements) == len(second.statements) == 1
    if connection.vendor == "postgresql":
        assert first.round_trips == 1, first.sent  # Parse, Bind, Execute, Sync sent as one
        assert len(server_prepared(alias)) == 2  # the precompiled statement and the ORM's
        assert second.round_trips == 1
        assert second.sent == [], second.sent  # run by name: the SQL is neither parsed nor sent again
        # The first prepared and ran in one exchange (a pipeline: whether libpq also sends a
        # Flush, and before or after the Sync, depends on timing); later ones go plainly, which
        # costs less.
        assert first.client_messages[0] == "Parse" and "Sync" in first.client_messages, first.client_messages
        assert set(first.client_messages) <= {"Parse", "Bind", "Describe", "Execute", "Sync", "Flush"}
        assert second.client_messages == ["Bind", "Describe", "Execute", "Sync"], second.client_messages


def test_other_statements_are_prepared_only_once_repeated(db, namespace):
    _, alias, build = probe()
    assert list(build("team-a").values_list("name", alias)) == [("team-a", None)]
    if connection.vendor == "postgresql":
        assert connection.connection.prepare_threshold == 2  # settings.py's default
        assert server_prepared(alias) == []  # run once: not prepared
        for _ in range(2):
            list(build("team-a").values_list("name", alias))
        assert len(server_prepared(alias)) == 1  # run a third time: prepared


def test_the_prepare_threshold_is_a_number_or_off():
    settings_of = "from django.conf import settings; print(settings.DATABASES['default']['OPTIONS'])"
    result, _ = run([sys.executable, "-c", f"import django; django.setup(); {settings_of}"],
                    DJANGO_SETTINGS_MODULE="controlplane.settings", DATABASE_PREPARE_THRESHOLD="off",
                    **POOLED_POSTGRES)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "'server_side_binding': True" in result.stdout and "'prepare_threshold': None" in result.stdout
    for wrong in ("soon", "-1"):
        result, _ = run([sys.executable, "manage.py", "check"], DATABASE_PREPARE_THRESHOLD=wrong, **POOLED_POSTGRES)
        assert result.returncode == 1
        assert f"DATABASE_PREPARE_THRESHOLD={wrong!r}: set a number of executions (0: at once) or off" in result.stderr
