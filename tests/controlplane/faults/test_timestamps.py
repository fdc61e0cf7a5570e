"""controlplane.faults.postgresql.timestamps: timestamptz values read by psycopg's C loader are
exactly what Django's own loader gives (aware, in datetime.timezone.utc), errors included.

Against a private PostgreSQL cluster (cluster.py), so that it runs whatever database the suite
is on: connections made by our backend, and psycopg connections given either adapters template.
"""

from __future__ import annotations

import datetime

import psycopg
import pytest
from django.db.backends.postgresql.psycopg_any import get_adapters_template
from django.db.utils import ConnectionHandler
from hypothesis import given, settings
from hypothesis import strategies as st

from controlplane.faults.postgresql import timestamps
from tests.controlplane.faults.cluster import PrivateCluster

MOMENTS = st.datetimes(
    min_value=datetime.datetime(1, 1, 2),
    max_value=datetime.datetime(9999, 12, 30),
    timezones=st.sampled_from([datetime.UTC, datetime.timezone(datetime.timedelta(hours=-9, minutes=-30))]),
)


@pytest.fixture(scope="module")
def cluster():
    cluster = PrivateCluster().init()
    yield cluster
    cluster.destroy()


@pytest.fixture(scope="module")
def both(cluster):
    """Two connections to the cluster, as Django sets sessions up (TimeZone UTC): ours, and one
    reading timestamptz with the loader Django registers for UTC (psycopg_any.register_tzloader's)."""
    djangos = get_adapters_template(True, datetime.UTC)
    assert djangos.get_loader(1184, 0).__name__ == "SpecificTzLoader"
    connections = [
        psycopg.connect(cluster.url, autocommit=True, context=context)
        for context in (timestamps.adapters_template(True, datetime.UTC), djangos)
    ]
    for connection in connections:
        connection.execute("SET TIME ZONE 'UTC'")
    yield connections
    for connection in connections:
        connection.close()


def test_our_backends_connections_read_timestamptz_with_the_c_loader(cluster, django_db_blocker):
    database = {"ENGINE": "controlplane.faults.postgresql", "NAME": "faults", "USER": "postgres",
                "HOST": "127.0.0.1", "PORT": str(cluster.port)}  # fmt: skip
    connection = ConnectionHandler({"default": database})["default"]  # not the suite's: a handler of its own
    try:
        with django_db_blocker.unblock(), connection.cursor() as cursor:
            assert cursor.cursor.adapters.get_loader(1184, 0) is timestamps.UtcTimestamptzLoader
            cursor.execute("SELECT now(), '2026-11-25 04:24:18.27+05:30'::timestamptz, NULL::timestamptz")
            now, moment, null = cursor.fetchone()
    finally:
        connection.close()
    assert now.tzinfo is datetime.UTC and null is None
    assert moment == datetime.datetime(2026, 11, 24, 22, 54, 18, 270000, tzinfo=datetime.UTC)


def test_another_time_zone_keeps_djangos_loader():
    paris = datetime.timezone(datetime.timedelta(hours=1))
    assert timestamps.adapters_template(True, paris) is get_adapters_template(True, paris)
    assert timestamps.adapters_template(False, None) is get_adapters_template(False, None)


@settings(max_examples=200, deadline=None)
@given(moments=st.lists(MOMENTS, min_size=1, max_size=5))
def test_the_same_values_as_djangos_loader(both, moments):
    sql = "SELECT " + ", ".join(["%s::timestamptz"] * len(moments)) + ", NULL::timestamptz"
    ours, djangos = (connection.execute(sql, moments).fetchall() for connection in both)
    assert ours == djangos
    assert [moment.tzinfo for moment in ours[0][:-1]] == [datetime.UTC] * len(moments)
    assert ours[0][:-1] == tuple(moments)  # and the moments stored


@pytest.mark.parametrize("text", ["infinity", "-infinity", "0044-03-15 00:00:00+00 BC"])
def test_out_of_range_values_fail_as_with_djangos_loader(both, text):
    errors = []
    for connection in both:
        with pytest.raises(psycopg.DataError) as raised:
            connection.execute(f"SELECT '{text}'::timestamptz").fetchall()
        errors.append(str(raised.value).split(":")[0])
    assert errors[0] == errors[1]
