"""uploads_facets(), the function behind the stored `facets` column (PostgreSQL).

Migration 0006 rewrote it in PL/pgSQL without rewriting the stored values, which is right
only if both versions agree on every input. Migration 0007 appends the slug-prefix pairs
to 0006's facets. Hypothesis feeds the versions the same JSON, well formed or not, and
compares the arrays element for element. The Python builders in page_query must name the
same texts, or a filter would match nothing.
"""

from __future__ import annotations

import json
from importlib import import_module

import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uploads.api.v1 import uploads_pb2 as pb
from uploads.read.page_query import (
    Dialect,
    conditions,
    facet_of_metadata,
    facet_of_slug_prefix,
    facet_of_tag,
    facet_pair,
)
from uploads.read.query import ListQuery, MetadataCondition

pytestmark = pytest.mark.django_db

VERSIONS = {
    "0005": import_module("uploads.migrations.0005_facets_and_covering_path").FACETS_FUNCTION,
    "0006": import_module("uploads.migrations.0006_facets_function_plpgsql").FACETS_FUNCTION,
}

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


def create_version(migration: str) -> str:
    """That migration's function, as a temporary function beside the current one."""
    name = f"pg_temp.uploads_facets_{migration}"
    with connection.cursor() as cursor:
        cursor.execute(VERSIONS[migration].replace("FUNCTION uploads_facets(", f"FUNCTION {name}("))
    return name


def with_pairs(facets: list, slug: str | None) -> list:
    """0007's facets from 0006's: the 2-character slug prefix facet paired with each tag and
    metadata facet (SQL's NULL propagation where one is NULL)."""
    others = facets[: len(facets) - (3 if slug is None else min(3, len(slug)))]
    paired = [] if slug is None or len(slug) < 2 else [facet_of_slug_prefix(slug[:2])]
    return facets + [None if o is None else facet_pair(p, o) for p in paired for o in others]


def has_no_facets_column() -> bool:
    """Databases other than PostgreSQL filter with json_each: no function, no column."""
    with connection.cursor() as cursor:
        columns = {c.name for c in connection.introspection.get_table_description(cursor, "uploads_upload")}
    return "facets" not in columns


def test_each_version_is_the_one_before_plus_what_its_migration_adds():
    if connection.vendor != "postgresql":
        assert has_no_facets_column()
        return
    v0005, v0006 = create_version("0005"), create_version("0006")

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(tags=TAGS, kvs=KVS, slug=SLUG, tags_sql=JSON_OR_NULL, kvs_sql=JSON_OR_NULL)
    def agree(tags, kvs, slug, tags_sql, kvs_sql):
        tags = tags if tags_sql else None
        kvs = kvs if kvs_sql else None
        plpgsql = facets(v0006, tags, kvs, slug)
        assert plpgsql == facets(v0005, tags, kvs, slug)  # 0006 only changed the language
        assert facets("uploads_facets", tags, kvs, slug) == with_pairs(plpgsql, slug)

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
    others = [
        *(facet_of_tag(tag) for tag in tags),
        facet_of_metadata("status", pb.METADATA_VALUE_TYPE_STRING, "draft"),
        facet_of_metadata("approved", pb.METADATA_VALUE_TYPE_BOOL, True),
        facet_of_metadata("x:s", pb.METADATA_VALUE_TYPE_BOOL, False),
    ]
    assert facets("uploads_facets", tags, kvs, "re") == [
        *others,
        facet_of_slug_prefix("r"),
        facet_of_slug_prefix("re"),
        *(facet_pair(facet_of_slug_prefix("re"), other) for other in others),
    ]
    assert facets("uploads_facets", [], [], "report")[-1] == facet_of_slug_prefix("report")
    stored = facets("uploads_facets", ["x"], [], "report")
    assert stored[-1] == facet_pair(facet_of_slug_prefix("re"), facet_of_tag("x")) == "3:pret1:x"


def test_a_slug_prefix_of_two_or_more_characters_pairs_with_the_tags_and_metadata():
    def asked(**filters) -> tuple[list[str], list]:  # the WHERE conditions and their parameters
        return conditions(
            Dialect(postgresql=True), bucket_id=None, namespaces=None, query=ListQuery(**filters), anchor=None
        )

    finance, draft = facet_of_tag("finance"), facet_of_metadata("status", pb.METADATA_VALUE_TYPE_STRING, "draft")
    status = (MetadataCondition("status", pb.METADATA_VALUE_TYPE_STRING, "draft"),)
    assert asked(tags=("finance",), metadata=status, slug_prefix="re") == (
        ["u.facets @> %s::text[]"],
        [[facet_pair("pre", finance), facet_pair("pre", draft)]],
    )
    assert asked(tags=("finance",), slug_prefix="rep") == (
        ["u.slug_folded LIKE %s", "u.facets @> %s::text[]"],
        ["rep%", [facet_pair("pre", finance)]],
    )
    assert asked(slug_prefix="rep")[1] == [["prep"]]  # alone: the 3-character facet, no LIKE
    assert asked(slug_prefix="repo")[1] == ["repo%", ["prep"]]
    # Unpaired: a 1-character prefix, a prefix alone, tags and metadata without a prefix.
    assert asked(tags=("finance",), slug_prefix="r")[1] == [[finance, "pr"]]
    assert asked(slug_prefix="re")[1] == [["pre"]]
    assert asked(tags=("finance",), metadata=status)[1] == [[finance, draft]]
