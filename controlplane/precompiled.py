"""Querysets compiled to SQL once, then run with new values: for reads on every request.

Building and compiling a queryset costs Django more than a simple indexed query costs
PostgreSQL (hundreds of µs for one with subqueries), yet on a hot path only a few values
change from call to call. `PrecompiledQuery` builds the queryset once per database with
placeholder strings where those values go, compiles it, and afterwards executes that SQL
with the real values in the placeholders' parameter slots. Each column's value passes
through the converters Django itself would apply (time zones, JSON, ...), so rows come back
as the ORM would return them from `values_list()` (build one: the caller knows the order).

A placeholder's mark is a string while the queryset is compiled, and must reach the SQL
parameters unchanged: a string field's lookup does; for another type, compare with
`Value(mark)` (no conversion). At run time a value may be of any type the driver adapts, as
the database's column takes it (connection.ops.adapt_*_value).

On PostgreSQL the statements also run prepared (`prepared`): planned once per connection
instead of at every call, which for a statement with subqueries costs more than running it.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable
from typing import NamedTuple

from django.db import connections
from django.db.models import QuerySet
from django.db.models.query import get_related_populators
from psycopg import pq


@contextlib.contextmanager
def prepared(alias: str = "default"):
    """Statements run in the block are prepared from their first execution on the connection.

    For hot reads: psycopg otherwise prepares a statement only once a connection has run it
    more than DATABASE_PREPARE_THRESHOLD times (settings.py), and never with server-side
    binding off or preparation "off" (a pooler that cannot carry prepared statements): then
    this changes nothing. SQLite caches its own statements.
    """
    connection = connections[alias]
    if connection.vendor != "postgresql" or not connection.features.uses_server_side_binding:
        yield
        return
    connection.ensure_connection()
    pg_connection = connection.connection
    threshold = pg_connection.prepare_threshold
    if threshold is None:
        yield
        return
    pg_connection.prepare_threshold = 0
    try:
        with connection.execute_wrapper(_prepare_in_one_round_trip):
            yield
    finally:
        pg_connection.prepare_threshold = threshold


def _prepare_in_one_round_trip(execute, sql, params, many, context):
    """A statement's first execution on a connection goes as one pipeline (Parse, Bind,
    Execute, Sync): psycopg otherwise waits for a preparing Parse's answer before it executes,
    a round trip of its own. Later ones go plainly: a pipeline costs ~20 µs of client CPU more
    than a plain execution, and a prepared statement sends no Parse to save a round trip on.
    (Should psycopg have dropped the statement since, it prepares it again, in two round trips.)"""
    connection = context["connection"]
    pg_connection = connection.connection
    if many or pg_connection.pgconn.pipeline_status != pq.PipelineStatus.OFF:
        return execute(sql, params, many, context)
    sent = _sent_prepared.get(pg_connection)
    if sent is None:
        sent = _sent_prepared[pg_connection] = set()
    if sql in sent:
        return execute(sql, params, many, context)
    with connection.wrap_database_errors, pg_connection.pipeline():
        result = execute(sql, params, many, context)
    if len(sent) >= _SENT_PREPARED_MAX:
        sent.clear()  # many distinct statements (ListUploads' filters): start over, not grow
    sent.add(sql)
    return result


# Per psycopg connection: the SQL this module has had prepared on it. A hint only: psycopg
# keeps its own list of what is prepared (prepared_max, least recently used first out).
_sent_prepared: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_SENT_PREPARED_MAX = 256


class _Compiled(NamedTuple):
    sql: str
    params: tuple
    slots: tuple[tuple[int, str], ...]  # (parameter index, placeholder name)
    converters: tuple[tuple[int, object, tuple], ...]  # (column index, expression, converters)
    instances: _Instances | None  # how rows become model instances (querysets of models)


class _Instances(NamedTuple):
    model: type
    attnames: list[str]  # the model's columns, in the row's order
    start: int
    end: int
    related: list  # Django's populators of select_related instances


class PrecompiledQuery:
    def __init__(self, build: Callable[..., QuerySet], *placeholders: str):
        """`build(**{name: placeholder})` returns the queryset; each placeholder must reach its SQL."""
        self.build = build
        self.placeholders = placeholders
        self._compiled: dict[str, _Compiled] = {}

    def objects(self, alias: str = "default", **values: str) -> list:
        """The model instances iterating the queryset gives, select_related ones attached
        (a plain model queryset: no annotations, no deferred fields)."""
        compiled = self._compiled.get(alias) or self._compile(alias)
        if compiled.instances is None:
            raise TypeError("objects() runs plain model querysets (no values, annotations or deferred fields)")
        model, attnames, start, end, related = compiled.instances
        found = []
        for row in self.rows(alias, **values):
            instance = model.from_db(alias, attnames, row[start:end])
            for populator in related:
                populator.populate(row, instance)
            found.append(instance)
        return found

    def rows(self, alias: str = "default", **values: str) -> list[tuple]:
        compiled = self._compiled.get(alias) or self._compile(alias)
        params = list(compiled.params)
        for index, name in compiled.slots:
            params[index] = values[name]
        connection = connections[alias]
        with prepared(alias), connection.cursor() as cursor:
            cursor.execute(compiled.sql, params)
            fetched = cursor.fetchall()
        if not compiled.converters:
            return fetched
        rows = []
        for row in fetched:
            row = list(row)
            for i, expression, converters in compiled.converters:
                for convert in converters:
                    row[i] = convert(row[i], expression, connection)
            rows.append(tuple(row))
        return rows

    def _compile(self, alias: str) -> _Compiled:
        marks = {name: f"\x00placeholder:{name}\x00" for name in self.placeholders}
        queryset = self.build(**marks).using(alias)
        compiler = queryset.query.get_compiler(alias)
        sql, params = compiler.as_sql()
        by_mark = {mark: name for name, mark in marks.items()}
        slots = tuple((i, by_mark[p]) for i, p in enumerate(params) if isinstance(p, str) and p in by_mark)
        missing = set(self.placeholders) - {name for _, name in slots}
        if missing:
            raise RuntimeError(f"placeholders {sorted(missing)} do not reach the SQL parameters: {params!r}")
        connection = connections[alias]
        converters = []
        for i, (expression, _, _) in enumerate(compiler.select):
            found = tuple(connection.ops.get_db_converters(expression) + expression.get_db_converters(connection))
            if found:
                converters.append((i, expression, found))
        compiled = _Compiled(sql, tuple(params), slots, tuple(converters), self._instances(compiler, alias))
        self._compiled[alias] = compiled
        return compiled

    @staticmethod
    def _instances(compiler, alias: str) -> _Instances | None:
        # As django.db.models.query.ModelIterable does with each queryset it runs.
        info, query = compiler.klass_info, compiler.query
        if info is None or query.values_select or compiler.annotation_col_map or query.deferred_loading[0]:
            return None  # values, annotations or deferred fields: rows only
        start, end = info["select_fields"][0], info["select_fields"][-1] + 1
        attnames = [column[0].target.attname for column in compiler.select[start:end]]
        return _Instances(info["model"], attnames, start, end, get_related_populators(info, compiler.select, alias))
