"""controlplane.precompiled: a queryset's SQL compiled once, run with new values, converted as the ORM would."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from controlplane.precompiled import PrecompiledQuery
from namespaces.models import Namespace

pytestmark = pytest.mark.django_db


def by_name(name):
    return Namespace.objects.filter(name=name).order_by().values_list("name", "created_at", "max_sandboxes")


def test_runs_with_each_call_s_values_and_converts_like_the_orm(namespace, other_namespace):
    query = PrecompiledQuery(by_name, "name")
    for name in ("team-a", "team-b"):
        assert query.rows(name=name) == list(by_name(name))
    assert query.rows(name="nowhere") == []
    created_at = query.rows(name="team-a")[0][1]
    assert created_at.tzinfo is not None  # SQLite's text timestamps come back as aware datetimes


def test_compiles_once_per_database():
    calls = []

    def build(name):
        calls.append(name)
        return by_name(name)

    query = PrecompiledQuery(build, "name")
    query.rows(name="a")
    with CaptureQueriesContext(connection) as queries:
        query.rows(name="b")
    assert len(calls) == 1
    assert len(queries) == 1


def test_a_placeholder_that_does_not_reach_the_sql_is_refused():
    query = PrecompiledQuery(lambda name: Namespace.objects.values_list("name"), "name")
    with pytest.raises(RuntimeError, match="placeholders \\['name'\\]"):
        query.rows(name="team-a")
