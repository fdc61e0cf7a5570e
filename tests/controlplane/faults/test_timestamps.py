"""controlplane.faults.postgresql.timestamps: timestamptz values read by psycopg's C loader are
exactly what Django's own loader gives (aware, in datetime.timezone.utc), errors included."""

from __future__ import annotations

import datetime

import pytest
from django.db import connection
from django.db.backends.postgresql.psycopg_any import get_adapters_template
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controlplane.faults.postgresql import timestamps

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's timestamptz")

MOMENTS = st.datetimes(
    min_value=datetime.datetime(1, 1, 2),
    max_value=datetime.datetime(9999, 12, 30),
    timezones=st.sampled_from([datetime.UTC, datetime.timezone(datetime.timedelta(hours=-9, minutes=-30))]),
)


def read(cursor, sql: str, *params):
    cursor.execute(sql, params)
    return cursor.fetchall()


def djangos_loader(cursor):
    """The same cursor, reading timestamptz with the loader Django registers for UTC."""
    loader = get_adapters_template(True, datetime.UTC).get_loader(1184, 0)
    assert loader.__name__ == "SpecificTzLoader"  # psycopg_any.register_tzloader's
    cursor.cursor.adapters.register_loader("timestamptz", loader)
    assert cursor.cursor.adapters.get_loader(1184, 0) is loader
    return cursor


def test_connections_read_timestamptz_with_the_c_loader(db):
    with connection.cursor() as cursor:
        assert cursor.cursor.adapters.get_loader(1184, 0) is timestamps.UtcTimestamptzLoader
        (now,) = read(cursor, "SELECT now()")[0]
    assert now.tzinfo is datetime.UTC


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(MOMENTS, min_size=1, max_size=5))
def test_the_same_values_as_djangos_loader(db, moments):
    sql = "SELECT " + ", ".join(["%s::timestamptz"] * len(moments)) + ", NULL::timestamptz"
    with connection.cursor() as ours, connection.cursor() as theirs:
        got, expected = read(ours, sql, *moments), read(djangos_loader(theirs), sql, *moments)
    assert got == expected and [m.tzinfo for m in got[0][:-1]] == [datetime.UTC] * len(moments)
    assert got[0][:-1] == tuple(moments)  # and the moments stored


@pytest.mark.parametrize("text", ["infinity", "-infinity", "0044-03-15 00:00:00+00 BC"])
def test_out_of_range_values_fail_as_with_djangos_loader(db, text):
    from django.db import DataError

    with connection.cursor() as cursor, pytest.raises(DataError) as ours:
        read(cursor, f"SELECT '{text}'::timestamptz")
    with connection.cursor() as cursor, pytest.raises(DataError) as theirs:
        read(djangos_loader(cursor), f"SELECT '{text}'::timestamptz")
    assert str(ours.value).split(":")[0] == str(theirs.value).split(":")[0]
