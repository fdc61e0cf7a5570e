"""uploads_facets(), the function behind the stored `facets` column (PostgreSQL).

Migration 0006 rewrote it in PL/pgSQL without rewriting the stored values, which is right
only if both versions agree on every input. Hypothesis feeds both the same JSON, well
formed or not, and compares the arrays element for element. The Python builders in
page_query must name the same texts, or a filter would match nothing.
"""

from __future__ import annotations

import json
from importlib import import_module

import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uploads.api.v1 import uploads_pb2 as pb
from uploads.page_query import facet_of_metadata, facet_of_slug_prefix, facet_of_tag

pytestmark = pytest.mark.django_db

PREVIOUS = import_module("uploads.migrations.0005_facets_and_covering_path").FACETS_FUNCTION

TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=6)
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), TEXT)
TYPES = st.sampled_from(
    ["METADATA_VALUE_TYPE_STRING", "METADATA_VALUE_TYPE_BOOL", "METADATA_VALUE_TYPE_NUMBER", "", "other"]
)
VALUE = st.fixed_dictionaries({}, optional={"stringValue": SCALAR, "boolValue": SCALAR, "numberValue": SCALAR})
KV = st.fixed_dictionaries({}, optional={"key": st.one_of(TEXT, SCALAR), "valueType": TYPES, "value": VALUE})
TAGS = st.one_of(st.lists(st.one_of(TEXT, SCALAR, st.lists(TEXT, max_size=1)), max_size=4), SCALAR, st.just({}))
KVS = st.one_of(st.lists(st.one_of(KV, SCALAR), max_size=4), SCALAR, st.just({"key": "k"}))
SLUG = st.one_of(st.none(), TEXT)
JSON_OR_NULL = st.booleans()  # False: SQL NULL in place of the JSON value


def facets(function: str, tags, kvs, slug) -> list | None:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {function}(%s::jsonb, %s::jsonb, %s)",
            [None if tags is None else json.dumps(tags), None if kvs is None else json.dumps(kvs), slug],
        )
        return cursor.fetchone()[0]


def create_previous_version() -> str:
    """0005's SQL function, as a temporary function beside the current one."""
    with connection.cursor() as cursor:
        cursor.execute(PREVIOUS.replace("FUNCTION uploads_facets(", "FUNCTION pg_temp.uploads_facets_0005("))
    return "pg_temp.uploads_facets_0005"


def has_no_facets_column() -> bool:
    """Databases other than PostgreSQL filter with json_each: no function, no column."""
    with connection.cursor() as cursor:
        columns = {c.name for c in connection.introspection.get_table_description(cursor, "uploads_upload")}
    return "facets" not in columns


def test_plpgsql_version_agrees_with_the_sql_version():
    if connection.vendor != "postgresql":
        assert has_no_facets_column()
        return
    previous = create_previous_version()

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(tags=TAGS, kvs=KVS, slug=SLUG, tags_sql=JSON_OR_NULL, kvs_sql=JSON_OR_NULL)
    def agree(tags, kvs, slug, tags_sql, kvs_sql):
        tags = tags if tags_sql else None
        kvs = kvs if kvs_sql else None
        assert facets("uploads_facets", tags, kvs, slug) == facets(previous, tags, kvs, slug)

    agree()


def test_filters_name_the_texts_the_function_stores():
    if connection.vendor != "postgresql":
        assert has_no_facets_column()
        return
    tags = ["finance", "a:b", "ü"]
    kvs = [
        {"key": "status", "valueType": "METADATA_VALUE_TYPE_STRING", "value": {"stringValue": "draft"}},
        {"key": "approved", "valueType": "METADATA_VALUE_TYPE_BOOL", "value": {"boolValue": True}},
        {"key": "pages", "valueType": "METADATA_VALUE_TYPE_NUMBER", "value": {"numberValue": 3}},
        {"key": "x:s", "valueType": "METADATA_VALUE_TYPE_BOOL", "value": {"boolValue": False}},
    ]
    assert facets("uploads_facets", tags, kvs, "re") == [
        *(facet_of_tag(tag) for tag in tags),
        facet_of_metadata("status", pb.METADATA_VALUE_TYPE_STRING, "draft"),
        facet_of_metadata("approved", pb.METADATA_VALUE_TYPE_BOOL, True),
        facet_of_metadata("x:s", pb.METADATA_VALUE_TYPE_BOOL, False),
        facet_of_slug_prefix("r"),
        facet_of_slug_prefix("re"),
    ]
    assert facets("uploads_facets", [], [], "report")[-1] == facet_of_slug_prefix("report")
