"""ListUploads: filters, sorting, fallbacks and limits."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.support.uploads_factory import LIST, T0, add, bool_kv, ids, iso, make_bucket, record, string_kv, violation


@pytest.fixture
def bucket(namespace):
    return make_bucket()


@pytest.fixture
def viewer(make_key):
    return make_key()


@pytest.fixture
def listed(rpc, bucket, viewer):
    """listed(**request fields) → ListUploads result for the bucket, as a viewer."""

    def call(**fields):
        body = {"bucket": {"bucketId": str(bucket.pk)}, **fields}
        return rpc(LIST, body, token=viewer)

    return call


def test_response_carries_every_given_field_in_spec_json(listed, bucket):
    full = record(
        1,
        url="https://f.example/u1",
        contentUrl="https://cdn.example/u1",
        tags=["a", "b"],
        integrationId="6f1c1d8e-3c1e-4f5e-9a55-1b2c3d4e5f60",
        integration={
            "integrationId": "6f1c1d8e-3c1e-4f5e-9a55-1b2c3d4e5f60",
            "name": "Drive",
            "oauthClientId": "c1",
            "folderBehavior": "INTEGRATION_FOLDER_BEHAVIOR_MIRROR",
            "folderLinkUrl": "https://drive.example/f",
            "mode": "INTEGRATION_MODE_SYNC",
            "bucketLauncherEnabled": True,
        },
        allowAnyExtension=True,
        defaultSlugExtension="txt",
        generatedDescription="a file",
        metaUploads=[
            {
                "type": {"name": "thumbnail", "n": 1, "filename": "t.png"},
                "metadataId": "m1",
                "uploadUrl": "https://up.example/m1",
                "downloadUrl": "https://down.example/m1",
            }
        ],
        private=True,
        aliases=[
            {
                "aliasId": "a1",
                "uploadId": "u0001",
                "path": "/share/1",
                "slug": "share-1",
                "url": "https://f.example/a1",
                "hasPassword": True,
                "expiresAt": "2024-02-01T00:00:00Z",
                "maxUses": 5,
                "useCount": 2,
                "allowedUserIds": ["x", "y"],
                "createdAt": "2024-01-02T00:00:00.250Z",
                "externalPath": "drive:/1",
            }
        ],
        author={"userId": "u-1", "username": "ann"},
        lastModifiedBy={"userId": "u-2", "username": "bob"},
        thumbnailGenerationVersion=1,
        aiDescriptionGenerationVersion=2,
        aiTagsGenerationVersion=3,
        virusScanGenerationVersion=4,
        aiDescriptionInputRef="ref",
        intentMetadata={"share": {"audience": "eng", "notify": True}},
        externalPath="drive:/files/1.txt",
        isVirtualFile=True,
        integrationHidden=True,
        version=7,
        thumbnailContentTypeUrn="urn:mime:txt",
        thumbnailContentTypeIconName="icon-txt",
        thumbnailContentTypeIconUrl="https://i.example/txt.svg",
        metadataKvs=[
            {**string_kv("status", "draft"), "title": "Status", "iconName": "flag", "hiddenFromUsers": True},
            bool_kv("approved", False),
            {"key": "pages", "valueType": "METADATA_VALUE_TYPE_NUMBER", "value": {"numberValue": 12.5}},
            {
                "key": "reviewers",
                "valueType": "METADATA_VALUE_TYPE_ARRAY",
                "value": {"arrayValue": [{"stringValue": "ann"}, {"boolValue": True}]},
            },
            {
                "key": "exif",
                "valueType": "METADATA_VALUE_TYPE_OBJECT",
                "value": {"objectValue": {"w": {"numberValue": 640.0}}},
            },
        ],
    )
    add(bucket, [full])
    (upload,) = listed().body["uploads"]
    assert upload["sizeBytes"] == "10"
    assert upload["createdAt"] == "2024-01-01T01:00:00Z"
    assert upload == full


def test_empty_bucket_has_no_uploads_and_no_cursor(listed):
    result = listed()
    assert result.status == 200
    assert result.body == {}


def test_path_filter_is_the_path_or_a_folder_below_it(listed, bucket):
    paths = ["/a", "/a/x", "/a/x/y", "/ab", "/b/a", "/A/x"]
    add(bucket, [record(i, path=p) for i, p in enumerate(paths, 1)])
    assert sorted(ids(listed(path="/a"))) == ["u0001", "u0002", "u0003"]
    assert sorted(ids(listed(path="/a/"))) == ["u0001", "u0002", "u0003"]
    assert ids(listed(path="/a/x/y")) == ["u0003"]
    assert ids(listed(path="/A")) == ["u0006"]  # case-sensitive
    assert len(ids(listed(path="/"))) == 6  # the root: everything


def test_tags_filter_needs_all_tags(listed, bucket):
    add(bucket, [record(1, tags=["x", "y"]), record(2, tags=["x"]), record(3, tags=["y", "x", "z"]), record(4)])
    assert sorted(ids(listed(tags=["x", "y"]))) == ["u0001", "u0003"]
    assert sorted(ids(listed(tags=["x"]))) == ["u0001", "u0002", "u0003"]
    assert ids(listed(tags=["nope"])) == []


def test_date_range_is_inclusive_on_created_at(listed, bucket):
    add(bucket, [record(i) for i in range(1, 6)])
    result = listed(dateFrom=iso(T0 + timedelta(hours=2)), dateTo=iso(T0 + timedelta(hours=4)))
    assert ids(result) == ["u0004", "u0003", "u0002"]
    assert ids(listed(dateFrom=iso(T0 + timedelta(hours=5)))) == ["u0005"]
    assert ids(listed(dateTo=iso(T0 + timedelta(hours=1)))) == ["u0001"]


def test_deprecated_day_offsets_are_normalized_and_never_rejected(listed, bucket):
    now = timezone.now()
    add(bucket, [record(n, createdAt=iso(now - timedelta(days=n, hours=1))) for n in (1, 5, 10)])
    assert ids(listed(daysFrom=7)) == ["u0001", "u0005"]
    assert ids(listed(daysFrom=-7)) == ["u0001", "u0005"]  # the magnitude counts
    assert ids(listed(daysTo=3)) == ["u0005", "u0010"]
    assert ids(listed(daysFrom=7, daysTo=3)) == ["u0005"]
    assert ids(listed(daysFrom=3, daysTo=7)) == ["u0005"]  # given the wrong way round
    assert ids(listed(daysFrom=2147483647, daysTo=-2147483648)) == []  # capped at 100 years, an empty range
    assert len(ids(listed(daysFrom=2147483647))) == 3
    # Superseded by dateFrom/dateTo when those are set.
    assert len(ids(listed(daysFrom=2, dateFrom=iso(now - timedelta(days=30))))) == 3
    assert len(ids(listed(daysTo=2, dateTo=iso(now)))) == 3


def test_slug_filter_is_a_case_insensitive_prefix(listed, bucket):
    add(bucket, [record(1, slug="Report-2024"), record(2, slug="report"), record(3, slug="rep"), record(4, slug="x")])
    assert sorted(ids(listed(slug="REPORT"))) == ["u0001", "u0002"]
    assert ids(listed(slug="report-2024")) == ["u0001"]  # an exact slug matches
    assert sorted(ids(listed(slug="re"))) == ["u0001", "u0002", "u0003"]
    assert ids(listed(slug="%")) == []  # LIKE wildcards are literal


def test_metadata_filters_combine_with_and(listed, bucket):
    add(
        bucket,
        [
            record(1, metadataKvs=[string_kv("status", "draft"), bool_kv("approved", True)]),
            record(2, metadataKvs=[string_kv("status", "draft"), bool_kv("approved", False)]),
            record(3, metadataKvs=[string_kv("status", "final"), bool_kv("approved", True)]),
            record(4),
        ],
    )
    assert ids(listed(metadataFilters=[{"key": "status", "stringValue": "draft"}])) == ["u0002", "u0001"]
    assert ids(listed(metadataFilters=[{"key": "approved", "boolValue": False}])) == ["u0002"]
    both = [{"key": "status", "stringValue": "draft"}, {"key": "approved", "boolValue": True}]
    assert ids(listed(metadataFilters=both)) == ["u0001"]
    # A value of the other filterable type, or an unknown key, matches nothing.
    assert ids(listed(metadataFilters=[{"key": "approved", "stringValue": "true"}])) == []
    assert ids(listed(metadataFilters=[{"key": "nope", "stringValue": "x"}])) == []


@pytest.mark.parametrize(
    "kv, held",
    [
        (
            {"key": "k", "valueType": "METADATA_VALUE_TYPE_ARRAY", "value": {"arrayValue": [{"stringValue": "a"}]}},
            "ARRAY",
        ),
        ({"key": "k", "valueType": "METADATA_VALUE_TYPE_OBJECT", "value": {"objectValue": {}}}, "OBJECT"),
        ({"key": "k", "valueType": "METADATA_VALUE_TYPE_NUMBER", "value": {"numberValue": 1}}, "NUMBER"),
    ],
)
def test_metadata_filter_on_a_key_of_another_type_names_the_key(listed, bucket, kv, held):
    add(bucket, [record(1, metadataKvs=[kv, string_kv("s", "v")])])
    result = listed(metadataFilters=[{"key": "s", "stringValue": "v"}, {"key": "k", "stringValue": "a"}])
    field_violation = violation(result)
    assert field_violation["field"] == "metadataFilters[1].key"
    assert "'k'" in field_violation["description"] and held in field_violation["description"]


def test_metadata_filter_needs_a_key_and_a_value(listed):
    assert violation(listed(metadataFilters=[{"key": "k"}]))["field"] == "metadataFilters[0]"
    assert violation(listed(metadataFilters=[{"stringValue": "v"}]))["field"] == "metadataFilters[0].key"


SORTS = {
    "created_at": lambda r: r["createdAt"],
    "updated_at": lambda r: r["updatedAt"],
    "slug": lambda r: r["slug"],
    "size_bytes": lambda r: int(r["sizeBytes"]),
    "order": lambda r: r["order"],
}


@pytest.fixture
def sortable(bucket):
    # Ties on every field, so the uploadId tie-breaker matters.
    rows = [
        record(
            n, slug=f"s{n % 4}", sizeBytes=str((n % 3) * 100), order=n % 5, createdAt=iso(T0 + timedelta(hours=n % 6))
        )
        for n in range(1, 25)
    ]
    add(bucket, rows)
    return rows


@pytest.mark.parametrize("sort_by", list(SORTS))
@pytest.mark.parametrize("order", ["asc", "desc"])
def test_each_sort_field_in_both_orders_with_upload_id_tie_breaker(listed, sortable, sort_by, order):
    key = SORTS[sort_by]
    expected = sorted(sortable, key=lambda r: (key(r), r["uploadId"]), reverse=order == "desc")
    assert walk(listed, pageSize=5, sortBy=sort_by, sortOrder=order) == [r["uploadId"] for r in expected]


def test_sort_fallbacks(listed, sortable):
    newest_first = ids(listed(pageSize=100))
    assert newest_first == ids(listed(pageSize=100, sortBy="created_at", sortOrder="desc"))
    assert ids(listed(pageSize=100, sortBy="bogus")) == newest_first
    assert ids(listed(pageSize=100, sortBy="CREATED_AT", sortOrder="ASC")) == newest_first
    assert ids(listed(pageSize=100, sortOrder="ascending")) == newest_first
    assert ids(listed(pageSize=100, sortOrder="asc")) == newest_first[::-1]


def test_filters_and_sort_combined(listed, bucket):
    rows = [
        record(
            n,
            path=f"/p{n % 2}/f{n}",
            slug=f"{'ab' if n % 3 else 'cd'}-{n}",
            tags=["t"] if n % 4 else [],
            metadataKvs=[string_kv("s", "v" if n % 5 else "w")],
        )
        for n in range(1, 41)
    ]
    add(bucket, rows)
    result = walk(
        listed,
        pageSize=3,
        path="/p1",
        slug="AB",
        tags=["t"],
        metadataFilters=[{"key": "s", "stringValue": "v"}],
        dateFrom=iso(T0 + timedelta(hours=5)),
        sortBy="size_bytes",
        sortOrder="asc",
    )
    expected = [
        r["uploadId"]
        for r in rows
        if r["path"].startswith("/p1/")
        and r["slug"].startswith("ab")
        and r["tags"]
        and r["metadataKvs"][0]["value"]["stringValue"] == "v"
        and r["createdAt"] >= iso(T0 + timedelta(hours=5))
    ]
    assert result == expected and expected


@pytest.mark.parametrize(
    "field, ok, too_long",
    [("path", 4096, 4097), ("slug", 4096, 4097), ("sortBy", 64, 65), ("sortOrder", 64, 65)],
)
def test_text_limits_at_the_boundary_and_one_past(listed, field, ok, too_long):
    assert listed(**{field: "a" * ok}).status == 200
    field_violation = violation(listed(**{field: "a" * too_long}))
    assert field_violation["field"] == field
    assert str(ok) in field_violation["description"]


def test_tags_limit(listed):
    assert listed(tags=[f"t{i}" for i in range(1000)]).status == 200
    field_violation = violation(listed(tags=[f"t{i}" for i in range(1001)]))
    assert field_violation["field"] == "tags" and "1000" in field_violation["description"]


def test_metadata_filters_limit(listed):
    filters = [{"key": f"k{i}", "stringValue": "v"} for i in range(17)]
    assert listed(metadataFilters=filters[:16]).status == 200
    field_violation = violation(listed(metadataFilters=filters))
    assert field_violation["field"] == "metadataFilters" and "16" in field_violation["description"]


def test_page_size_default_cap_and_negative(listed, bucket):
    add(bucket, [record(n, tags=[]) for n in range(1, 1003)])
    assert len(ids(listed())) == 50
    assert len(ids(listed(pageSize=0))) == 50
    assert len(ids(listed(pageSize=1000))) == 1000
    assert len(ids(listed(pageSize=1001))) == 1000
    assert len(ids(listed(pageSize=2147483647))) == 1000
    field_violation = violation(listed(pageSize=-1))
    assert field_violation["field"] == "pageSize"


def test_error_body_has_the_section_7_shape(listed):
    body = listed(path="x" * 5000).body
    assert set(body) == {"code", "message", "details"}
    assert body["code"] == "invalid_argument"
    (detail,) = body["details"]
    assert set(detail) == {"type", "value", "debug"}
    assert isinstance(detail["value"], str) and isinstance(detail["debug"], dict)


def test_query_count_does_not_grow_with_page_size(listed, bucket):
    add(
        bucket,
        [
            record(n, aliases=[{"aliasId": f"a{n}"}], metaUploads=[{"metadataId": f"m{n}"}], tags=["t"])
            for n in range(1, 61)
        ],
    )
    listed()  # the key's first use writes its last-used time once; not part of a page's cost
    counts = []
    for size in (1, 10, 50):
        with CaptureQueriesContext(connection) as queries:
            assert len(ids(listed(pageSize=size, tags=["t"]))) == size
        counts.append(len(queries))
    assert counts[0] == counts[1] == counts[2], counts


def test_a_page_is_the_key_lookup_the_bucket_and_one_statement(listed, bucket):
    # The bucket (with the metadata key types) is read once, for the permission check and
    # the listing; aliases, metaUploads and integrations come inside the page's statement.
    add(bucket, [record(n, aliases=[{"aliasId": f"s{n}"}], metadataKvs=[string_kv("k", "v")]) for n in range(1, 4)])
    listed()  # the key's first use writes its last-used time once; not part of a page's cost
    with CaptureQueriesContext(connection) as queries:
        assert len(ids(listed(metadataFilters=[{"key": "k", "stringValue": "v"}], tags=[], slug="f"))) == 3
    # Less the Transaction interceptor's BEGIN/COMMIT (a savepoint inside the test's transaction).
    transaction_control = ("BEGIN", "COMMIT", "SAVEPOINT", "RELEASE SAVEPOINT")
    ours = [q["sql"] for q in queries.captured_queries if not q["sql"].startswith(transaction_control)]
    assert len(ours) == 3, ours
    assert "apikeys_apikey" in ours[0] and "uploads_bucket" in ours[1] and "uploads_alias" in ours[2]


def walk(listed, **fields) -> list[str]:
    """Every page from the first to the one with an empty nextCursor."""
    seen, cursor = [], ""
    for _ in range(1000):
        result = listed(cursor=cursor, **fields)
        seen += ids(result)
        cursor = result.body.get("nextCursor", "")
        if not cursor:
            return seen
    raise AssertionError("no last page")
