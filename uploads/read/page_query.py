"""One page of ListUploads as ONE SQL statement: the uploads, and for each its aliases,
metaUploads and integration as JSON aggregates (json_agg on PostgreSQL, json_group_array on
SQLite), so a page costs one round trip whatever its size.

Hand-written SQL rather than the ORM: the statement is fixed apart from its conditions, and
building it through querysets cost more per page than running it.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection

from controlplane.precompiled import prepared
from uploads.api.v1 import uploads_pb2 as pb

from ..models import Upload
from ..write import rows
from ..write.records import TYPE_NAME
from .cursors import Position
from .query import ListQuery


@dataclass
class Page:
    rows: list[tuple]  # UPLOAD_COLUMNS and the three aggregates, in the requested order
    has_more: bool


def fetch_page(*, bucket, namespaces: list[str] | None, query: ListQuery, position: Position | None, anchor) -> Page:
    """The page `page_statement` describes, run: one round trip."""
    sql, params = page_statement(bucket=bucket, namespaces=namespaces, query=query, position=position, anchor=anchor)
    with prepared(), connection.cursor() as cursor:  # the page's two statements: planned once per connection
        cursor.execute(sql, params)
        found = cursor.fetchall()
    return Page(rows=found[: query.page_size], has_more=len(found) > query.page_size)


def _read_back(stored: tuple[str, ...], *placement: str) -> tuple[str, ...]:
    """The columns a record is built from: what the write path stores (uploads/write/rows.py), in
    the same order, less the columns that only place or index a row."""
    return tuple(column for column in stored if column not in placement)


# In the order rows_to_json.record reads them.
UPLOAD_COLUMNS = _read_back(rows.UPLOAD_COLUMNS, "bucket_id", "slug_folded")
COLUMN_INDEX = {name: i for i, name in enumerate(UPLOAD_COLUMNS)}
ALIAS_COLUMNS = _read_back(rows.ALIAS_COLUMNS, "upload_id", "position")
META_COLUMNS = _read_back(rows.META_UPLOAD_COLUMNS, "upload_id", "position")
INTEGRATION_COLUMNS = rows.INTEGRATION_COLUMNS
FILTERABLE_TYPES = (pb.METADATA_VALUE_TYPE_STRING, pb.METADATA_VALUE_TYPE_BOOL)


@dataclass(frozen=True)
class Dialect:
    """What differs between PostgreSQL and SQLite in these statements."""

    postgresql: bool

    def array(self, columns: str) -> str:
        return f"json_build_array({columns})" if self.postgresql else f"json_array({columns})"

    def aggregate(self, element: str, order: str) -> str:
        if self.postgresql:
            return f"json_agg({element} ORDER BY {order})"
        return f"json_group_array(json({element}))"  # fed in order by the inner query

    def timestamp(self, column: str) -> str:
        # PostgreSQL hands the moment over as UTC text (rows_to_json.timestamp trims it to
        # json_format's digits): cheaper than loading a datetime and formatting it again.
        if self.postgresql:
            return f"to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US')"
        return column

    @property
    def text(self) -> str:
        # JSON aggregates as text: rows_to_json parses them with orjson, faster than psycopg's json.
        return "::text" if self.postgresql else ""

    def uuid(self, value: uuid.UUID):
        return value if self.postgresql else value.hex  # Django keeps UUIDs as 32 hex digits there

    def json(self, column: str) -> str:
        # SQLite keeps JSON columns as text: json() embeds them as JSON, not as a string.
        return column if self.postgresql else f"json({column})"


def dialect() -> Dialect:
    return Dialect(connection.vendor == "postgresql")


def page_statement(
    *, bucket, namespaces: list[str] | None, query: ListQuery, position: Position | None, anchor
) -> tuple[str, list]:
    """(sql, params) for the page: at most query.page_size + 1 rows, in the requested order.
    `bucket` (a selectors.BucketScope) or else `namespaces` (None: every bucket) is the scope.

    Two steps in one statement: `page` finds the rows' keys (upload_id and the sort value, so
    an index can answer it alone: see migration 0005), then only those rows are read whole
    and get their aggregates.
    """
    d = dialect()
    where, params = conditions(
        d, bucket_id=bucket.id if bucket else None, namespaces=namespaces, query=query, anchor=anchor
    )
    column = _quote(query.sort_by)
    if position is not None:
        # A row-value comparison: an index range bound (the seek), never an OFFSET.
        where.append(f"(u.{column}, u.upload_id) {'<' if query.descending else '>'} (%s, %s)")
        params += [_db_value(query.sort_by, position.value), position.upload_id]
    direction = "DESC" if query.descending else "ASC"
    order = f"u.{column} {direction}, u.upload_id {direction}"
    scope_join = "" if bucket is not None or namespaces is None else " JOIN uploads_bucket b ON b.id = u.bucket_id"
    # The limit is written in (a validated int), not bound: PostgreSQL cannot cost a generic
    # plan for an unknown LIMIT, so it would plan the prepared statement again at every call.
    page = (
        f"SELECT u.upload_id FROM uploads_upload u{scope_join}"  # noqa: S608 (fixed identifiers; values are parameters)
        f" WHERE {' AND '.join(where) or '1 = 1'} ORDER BY {order} LIMIT {int(query.page_size) + 1}"
    )
    if bucket is not None:
        # The namespace is known: no join to the bucket for the integration's namespace.
        namespace, namespace_join = "%s", ""
        params.insert(0, bucket.namespace_id)
    else:
        namespace, namespace_join = "b.namespace_id", " JOIN uploads_bucket b ON b.id = u.bucket_id"
    selected = ", ".join(
        d.timestamp(f"u.{c}") if c in ("created_at", "updated_at") else f"u.{_quote(c)}" for c in UPLOAD_COLUMNS
    )
    sql = (
        f"SELECT {selected}, ({_aliases(d)}){d.text}, ({_metas(d)}){d.text}, ({_integration(d)}){d.text}"  # noqa: S608 (fixed identifiers; values are parameters)
        f" FROM (SELECT u.*, {namespace} AS page_namespace_id FROM ({page}) page"
        f" JOIN uploads_upload u ON u.upload_id = page.upload_id{namespace_join}) u ORDER BY {order}"
    )
    return sql, params


def conditions(d: Dialect, *, bucket_id, namespaces, query: ListQuery, anchor) -> tuple[list[str], list]:
    where: list[str] = []
    params: list = []
    if bucket_id is not None:
        where.append("u.bucket_id = %s")
        params.append(d.uuid(bucket_id))
    elif namespaces is not None:
        where.append(
            "b.namespace_id IN (SELECT n.id FROM namespaces_namespace n WHERE n.name IN"  # noqa: S608 (fixed identifiers; values are parameters)
            f" ({', '.join(['%s'] * len(namespaces)) or 'NULL'}))"
        )
        params += namespaces
    if query.path:
        _path(d, query.path, where, params)
    low, high = _created_range(query, anchor)
    if low is not None:
        where.append("u.created_at >= %s")
        params.append(connection.ops.adapt_datetimefield_value(low))
    if high is not None:
        where.append("u.created_at <= %s")
        params.append(connection.ops.adapt_datetimefield_value(high))
    if d.postgresql:
        _facets(query, where, params)
        return where, params
    if query.slug_prefix:
        # SQLite's LIKE ignores case: the substr() equality keeps the filter exact.
        where.append("u.slug_folded LIKE %s ESCAPE '\\' AND substr(u.slug_folded, 1, %s) = %s")
        params += [_like_prefix(query.slug_prefix), len(query.slug_prefix), query.slug_prefix]
    if query.tags:
        _tags(query.tags, where, params)
    if query.metadata:
        _metadata(query, where, params)
    return where, params


def _created_range(query: ListQuery, anchor: datetime) -> tuple[datetime | None, datetime | None]:
    """The inclusive createdAt range; day offsets count back from `anchor` (the first page's now)."""
    low = query.date_from
    if low is None and query.days_from:
        low = anchor - timedelta(days=query.days_from)
    high = query.date_to
    if high is None and query.days_to:
        high = anchor - timedelta(days=query.days_to)
    return low, high


def _path(d: Dialect, path: str, where: list, params: list) -> None:
    folder = path + "/"
    if d.postgresql:
        # LIKE 'path%' is the index range (upl_bucket_path_sorts, which also holds every sort
        # key: an index-only scan). The exact test is a function call, which the planner
        # does not count as a second selective condition (it would underestimate the rows).
        where.append("u.path LIKE %s AND (u.path = %s OR starts_with(u.path, %s))")
        params += [_like_prefix(path), path, folder]
    else:
        # SQLite's LIKE ignores case: the substr() equality keeps the filter case-sensitive.
        where.append("(u.path = %s OR (u.path LIKE %s ESCAPE '\\' AND substr(u.path, 1, %s) = %s))")
        params += [path, _like_prefix(folder), len(folder), folder]


def _facets(query: ListQuery, where: list, params: list) -> None:
    """PostgreSQL: tags, metadata and the slug prefix as one GIN containment on the facets
    column (migrations 0005, 0007), whose per-element statistics give the planner the real
    number of matches; only the one test, so that the planner does not count a condition
    twice. Facet texts are built exactly as the SQL function uploads_facets builds them.

    A slug prefix of 2+ characters with tags or metadata asks for their pairs with its first
    two characters instead (each pair implies both halves): far fewer postings to intersect."""
    others = [facet_of_tag(tag) for tag in query.tags]
    others += [facet_of_metadata(m.key, m.value_type, m.value) for m in query.metadata]
    wanted = others
    if prefix := query.slug_prefix:
        if others and len(prefix) >= PAIRED_PREFIX_LENGTH:
            paired = facet_of_slug_prefix(prefix[:PAIRED_PREFIX_LENGTH])
            wanted, covered = [facet_pair(paired, other) for other in others], PAIRED_PREFIX_LENGTH
        else:
            wanted, covered = [*others, facet_of_slug_prefix(prefix)], SLUG_FACET_LENGTH
        if len(prefix) > covered:  # the rest of the prefix, on the rows the facets give
            where.append("u.slug_folded LIKE %s")
            params.append(_like_prefix(prefix))
    if wanted:
        where.append("u.facets @> %s::text[]")
        params.append(wanted)


SLUG_FACET_LENGTH = 3  # slug prefixes up to this many characters are facets
PAIRED_PREFIX_LENGTH = 2  # slug prefixes of this many characters are also paired with the others


def facet_pair(prefix: str, other: str) -> str:
    """As uploads_facets() writes a pair: the prefix facet's length delimits it."""
    return f"{len(prefix)}:{prefix}{other}"


def facet_of_tag(tag: str) -> str:
    return f"t{len(tag)}:{tag}"


def facet_of_metadata(key: str, value_type: int, value) -> str:
    if value_type == pb.METADATA_VALUE_TYPE_STRING:
        return f"m{len(key)}:{key}s{value}"
    return f"m{len(key)}:{key}b{'true' if value else 'false'}"


def facet_of_slug_prefix(prefix: str) -> str:
    return "p" + prefix[:SLUG_FACET_LENGTH]


def _tags(tags: tuple[str, ...], where: list, params: list) -> None:
    # SQLite: one condition whatever the number of tags (up to 1000): all must be among the row's.
    where.append(
        "(SELECT COUNT(DISTINCT t.value) FROM json_each(u.tags) AS t"
        " WHERE t.value IN (SELECT value FROM json_each(%s))) = %s"
    )
    params += [json.dumps(list(tags)), len(tags)]


def _metadata(query: ListQuery, where: list, params: list) -> None:
    for m in query.metadata:
        where.append(
            "EXISTS (SELECT 1 FROM json_each(u.metadata_kvs) AS m"  # noqa: S608 (fixed identifiers; values are parameters)
            " WHERE json_extract(m.value, '$.key') = %s AND json_extract(m.value, '$.valueType') = %s"
            f" AND json_extract(m.value, '$.value.{_value_key(m.value_type)}') = %s)"
        )
        params += [m.key, TYPE_NAME[m.value_type], m.value]


def _aliases(d: Dialect) -> str:
    special = {
        "allowed_user_ids": d.json("a.allowed_user_ids"),
        "expires_at": d.timestamp("a.expires_at"),
        "created_at": d.timestamp("a.created_at"),
    }
    columns = [special.get(c, f"a.{c}") for c in ALIAS_COLUMNS]
    return _children(d, "uploads_alias a", "a", columns)


def _metas(d: Dialect) -> str:
    return _children(d, "uploads_metaupload m", "m", [f"m.{c}" for c in META_COLUMNS])


def _children(d: Dialect, table: str, alias: str, columns: list[str]) -> str:
    """The upload's child rows, in their record order, as one JSON array of arrays."""
    element = d.array(", ".join(columns))
    if d.postgresql:
        return f"SELECT {d.aggregate(element, alias + '.position')} FROM {table} WHERE {alias}.upload_id = u.upload_id"  # noqa: S608 (fixed identifiers)
    return (
        f"SELECT {d.aggregate('e', '')} FROM (SELECT {element} AS e FROM {table}"  # noqa: S608 (fixed identifiers)
        f" WHERE {alias}.upload_id = u.upload_id ORDER BY {alias}.position)"
    )


def _integration(d: Dialect) -> str:
    # The row of the upload's own namespace (integrations are per namespace).
    element = d.array(", ".join(f"i.{c}" for c in INTEGRATION_COLUMNS))
    return (
        f"SELECT {element} FROM uploads_integration i"  # noqa: S608 (fixed identifiers; values are parameters)
        " WHERE i.namespace_id = u.page_namespace_id AND i.integration_id = u.integration_id"
    )


def _value_key(value_type: int) -> str:
    return "stringValue" if value_type == pb.METADATA_VALUE_TYPE_STRING else "boolValue"


def _like_prefix(prefix: str) -> str:
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + "%"


def _db_value(sort_by: str, value):
    return Upload._meta.get_field(sort_by).get_db_prep_value(value, connection)


def _quote(name: str) -> str:
    return connection.ops.quote_name(name)
