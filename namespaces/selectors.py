"""Reads of namespaces, shaped for the callers' access patterns: one query per read.

A namespace comes back with its group bindings, internal targets and image pull secrets in
the same SELECT: each child list is a correlated subquery aggregating its rows to a JSON
array (PostgreSQL jsonb_agg, SQLite json_group_array), served by the children's
namespace_id index. get_namespace's and list_namespaces' SQL is compiled once
(controlplane.precompiled).
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import NamedTuple

from django.db import connections, router
from django.db.models import Aggregate, F, Func, JSONField, OuterRef, QuerySet, Subquery
from django.db.models.functions import JSONObject

from controlplane.auth import Role
from controlplane.errors import Error
from controlplane.precompiled import PrecompiledQuery

from .models import QUOTA_FIELDS, GroupBinding, ImagePullSecret, InternalTarget, Namespace


class NamespaceRecord(NamedTuple):
    name: str
    created_at: datetime
    updated_at: datetime
    quotas: dict[str, int]  # only the quotas that are set
    groups: list[tuple[str, int]]  # (oidc_group, role), by group
    internal_targets: list[tuple[str, str, list[int]]]  # (name, host, ports), by name
    image_pull_secrets: list[tuple[str, str]]  # (registry, secret_ref), by registry


class _JSONList(Aggregate):
    """The group's values as one JSON array, ordered by `ordering` (a column of the group).

    SQLite before 3.44 cannot order inside an aggregate: there `_record` sorts the lists, by
    code point, which is the order of SQLite's BINARY collation. PostgreSQL orders them in
    the query, by the database's collation, as the ORM's order_by did.
    """

    function = "JSONB_AGG"
    arg_joiner = " ORDER BY "
    output_field = JSONField()

    def __init__(self, value, ordering):
        super().__init__(value, ordering)

    def as_sqlite(self, compiler, connection, **extra_context):
        value, _, aggregate_filter = self.get_source_expressions()
        unordered = self.copy()
        unordered.set_source_expressions([value, aggregate_filter])
        return unordered.as_sql(compiler, connection, function="JSON_GROUP_ARRAY", **extra_context)


class _JSONValue(Func):
    """A JSONField column as JSON, not as the text SQLite stores it in."""

    function = ""
    output_field = JSONField()

    def as_sqlite(self, compiler, connection, **extra_context):
        return super().as_sql(compiler, connection, function="JSON", **extra_context)


def _children(model, ordering: str, **fields) -> Subquery:
    rows = model.objects.filter(namespace=OuterRef("pk")).order_by().values("namespace")
    return Subquery(rows.values(items=_JSONList(JSONObject(**fields), F(ordering))), output_field=JSONField())


_COLUMNS = ("name", "created_at", "updated_at", *QUOTA_FIELDS, "groups_json", "targets_json", "secrets_json")


def _with_children(queryset: QuerySet) -> QuerySet:
    return queryset.annotate(
        groups_json=_children(GroupBinding, "oidc_group", group=F("oidc_group"), role=F("role")),
        targets_json=_children(InternalTarget, "name", name=F("name"), host=F("host"), ports=_JSONValue(F("ports"))),
        secrets_json=_children(ImagePullSecret, "registry", registry=F("registry"), ref=F("secret_ref")),
    ).values_list(*_COLUMNS)


def _record(row: tuple, vendor: str) -> NamespaceRecord:
    name, created_at, updated_at, *rest = row
    quota_values, (groups, targets, secrets) = rest[: len(QUOTA_FIELDS)], rest[len(QUOTA_FIELDS) :]
    in_order = sorted if vendor == "sqlite" else list  # see _JSONList
    return NamespaceRecord(
        name=name,
        created_at=created_at,
        updated_at=updated_at,
        quotas={f: v for f, v in zip(QUOTA_FIELDS, quota_values, strict=True) if v is not None},
        groups=in_order((g["group"], g["role"]) for g in groups or ()),
        internal_targets=in_order((t["name"], t["host"], t["ports"]) for t in targets or ()),
        image_pull_secrets=in_order((s["registry"], s["ref"]) for s in secrets or ()),
    )


_BY_NAME = PrecompiledQuery(lambda name: _with_children(Namespace.objects.filter(name=name).order_by()), "name")


def get_namespace(name: str) -> NamespaceRecord:
    alias = router.db_for_read(Namespace)
    rows = _BY_NAME.rows(alias, name=name)
    if not rows:
        raise Error.not_found(f"namespace {name!r} not found")
    return _record(rows[0], connections[alias].vendor)


def list_namespaces(*, after: str = "", limit: int = 100) -> list[NamespaceRecord]:
    """Keyset page ordered by name: the rows after `after`, at most `limit` of them."""
    alias = router.db_for_read(Namespace)
    rows = _page_query(bool(after), limit).rows(alias, after=after)  # a first page has no "after" slot
    return [_record(row, connections[alias].vendor) for row in rows]


@functools.lru_cache(maxsize=64)  # {first, later} x the page sizes clients ask for
def _page_query(later: bool, limit: int) -> PrecompiledQuery:
    def build(after=None):
        queryset = Namespace.objects.order_by("name")
        if later:
            queryset = queryset.filter(name__gt=after)
        return _with_children(queryset)[:limit]

    return PrecompiledQuery(build, "after") if later else PrecompiledQuery(build)


def roles_for_groups(groups: frozenset[str] | set[str]) -> dict[str, Role]:
    """Maps OIDC groups through every namespace's bindings; the highest role wins per namespace."""
    roles: dict[str, Role] = {}
    if not groups:
        return roles
    rows = GroupBinding.objects.filter(oidc_group__in=groups).values_list("namespace__name", "role")
    for namespace, role in rows:
        role = Role(role)
        if role > roles.get(namespace, 0):
            roles[namespace] = role
    return roles
