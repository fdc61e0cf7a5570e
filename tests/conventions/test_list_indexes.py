"""Every keyset list is served by an index in its own order: no sequential scan, no sort.

100k rows per listed table (half in the listed namespace), ANALYZEd, then EXPLAIN of the
queries each list runs, first page and a later one. PostgreSQL: no `Seq Scan` on the listed
table and no `Sort` node. SQLite (the embedded default): the same through EXPLAIN QUERY PLAN,
no full `SCAN` of the table and no `TEMP B-TREE` for the order.
"""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.db.models import Model
from django.test.utils import CaptureQueriesContext

from apikeys import selectors as key_selectors
from apikeys.models import ApiKey
from namespaces import selectors as namespace_selectors
from namespaces.models import Namespace
from workloads import selectors
from workloads.models import EgressEvent, EgressGrant, Environment, Job, Sandbox, Workspace

pytestmark = pytest.mark.django_db

ROWS = 100_000
OVERRIDES = {(ApiKey, "role"): "1"}  # standard keys carry a role (check constraint)
CONTAINERS_LISTS = [Job, Sandbox, Environment, Workspace, EgressGrant, EgressEvent]


def _literal(model: type[Model], field, namespace_ids: tuple[int, int]) -> str:
    if (model, field.name) in OVERRIDES:
        return OVERRIDES[model, field.name]
    if field.name == "namespace":
        return f"CASE WHEN i % 2 = 0 THEN {namespace_ids[0]} ELSE {namespace_ids[1]} END"
    if field.null:
        return "NULL"
    unique_together = {name for c in model._meta.constraints for name in getattr(c, "fields", ())}
    if field.unique or field.name in unique_together:
        return f"'{field.name[:3]}' || i"
    kind = field.get_internal_type()
    if kind == "DateTimeField":
        # Distinct, decreasing with i: keyset positions are spread as in real use.
        return "CURRENT_TIMESTAMP" if connection.vendor == "sqlite" else "now() - i * interval '1 second'"
    if kind == "JSONField":
        return "'[]'" if field.default is list else "'{}'"
    if kind == "BooleanField":
        return "FALSE"
    if "Integer" in kind:
        return "1"
    default = field.get_default()
    return "'" + str(default or (field.choices[0][0] if field.choices else "")).replace("'", "''") + "'"


def _fill(model: type[Model], namespace_ids: tuple[int, int]) -> None:
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    values = ", ".join(_literal(model, f, namespace_ids) for f in fields)
    if connection.vendor == "postgresql":
        series = f"generate_series(1, {ROWS}) AS s(i)"
        sql = f"INSERT INTO {model._meta.db_table} ({columns}) SELECT {values} FROM {series}"
    else:
        series = f"WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < {ROWS})"
        sql = f"INSERT INTO {model._meta.db_table} ({columns}) {series} SELECT {values} FROM s"
    with connection.cursor() as cursor:
        cursor.execute(sql)


def _plan(sql: str) -> list[str]:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("EXPLAIN " + sql)
            return [row[0] for row in cursor.fetchall()]
        cursor.execute("EXPLAIN QUERY PLAN " + sql)
        return [row[-1] for row in cursor.fetchall()]


def _problems(plan: list[str], table: str) -> list[str]:
    if connection.vendor == "postgresql":
        return [line for line in plan if f"Seq Scan on {table}" in line or re.search(r"\bSort\b", line)]
    return [line for line in plan if re.fullmatch(rf"SCAN {table}", line.strip()) or "TEMP B-TREE" in line]


def _assert_indexed(table: str, call) -> int:
    with CaptureQueriesContext(connection) as queries:
        call()
    listed = [q["sql"] for q in queries.captured_queries if re.search(rf'FROM "?{table}"?\s', q["sql"] + " ")]
    assert listed, f"no query on {table}"
    for sql in listed:
        plan = _plan(sql)
        assert not _problems(plan, table), "\n".join([sql, *plan])
    return len(listed)


@pytest.fixture(scope="module")
def filled(django_db_setup, django_db_blocker):
    """One fill for the module (each table: 100k rows, half in 'listed'); removed afterwards."""
    with django_db_blocker.unblock():
        listed = Namespace.objects.create(name="listed")
        other = Namespace.objects.create(name="other")
        ids = (listed.pk, other.pk)
        for model in [*CONTAINERS_LISTS, ApiKey, Namespace]:
            _fill(model, ids)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        yield listed
        _empty([*CONTAINERS_LISTS, ApiKey, Namespace])


def _empty(models: list[type[Model]]) -> None:
    tables = [m._meta.db_table for m in models]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":  # one statement: no per-row foreign key checks
            cursor.execute(f"TRUNCATE {', '.join(tables)} CASCADE")
        else:
            for table in tables:
                cursor.execute(f"DELETE FROM {table}")


@pytest.mark.parametrize("model", CONTAINERS_LISTS, ids=lambda m: m.__name__)
def test_containers_lists_use_their_index(filled, model):
    table = model._meta.db_table
    first = selectors.page(model, namespace="listed", limit=101)
    assert len(first) == 101 and all(row.namespace_id == filled.pk for row in first)
    _assert_indexed(table, lambda: selectors.page(model, namespace="listed", limit=101))
    after = selectors.position_of(first[-1])
    _assert_indexed(table, lambda: selectors.page(model, namespace="listed", after=after, limit=101))


def test_api_key_lists_use_their_index(filled):
    table = ApiKey._meta.db_table
    first = key_selectors.list_api_keys(namespace="listed", limit=101)
    after = (first[-1].created_at.isoformat(), first[-1].pk)
    _assert_indexed(table, lambda: key_selectors.list_api_keys(namespace="listed", limit=101))
    _assert_indexed(table, lambda: key_selectors.list_api_keys(namespace="listed", after=after, limit=101))
    _assert_indexed(table, lambda: key_selectors.list_api_keys(limit=101))
    _assert_indexed(table, lambda: key_selectors.list_api_keys(after=after, limit=101))


def test_namespace_list_uses_its_index(filled):
    table = Namespace._meta.db_table
    _assert_indexed(table, lambda: namespace_selectors.list_namespaces(limit=101))
    _assert_indexed(table, lambda: namespace_selectors.list_namespaces(after="nam5", limit=101))
