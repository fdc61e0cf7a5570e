"""Property: for random uploads and random filters, walking every page of ListUploads gives
exactly a plain in-Python filter-and-sort of the same records."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.uploads_factory import LIST, T0, add, iso, make_bucket, string_kv
from tests.uploads.test_list import SORTS
from uploads.models import Bucket

# LIKE's wildcards, non-ASCII and a separator-like ":" among the characters: the PostgreSQL
# filters go through escaped LIKE patterns and uploads_facets() texts built in both languages;
# slugs longer than the 3-character slug facet exercise its LIKE recheck.
SLUGS = st.text(alphabet="abAB%_Üü:", min_size=0, max_size=5)
TAG_VALUES = ["x", "y", "z", "ü", "a:b", "%"]
TAGS = st.lists(st.sampled_from(TAG_VALUES), unique=True, max_size=3)
PATHS = st.sampled_from(["/a", "/a/b", "/a/b/c", "/ab", "/c/a", "/a_/x", "/a%", "/ü/a"])
HOURS = st.integers(0, 5)  # few distinct values: ties on every sort field

upload_strategy = st.fixed_dictionaries(
    {
        "slug": SLUGS,
        "tags": TAGS,
        "path": PATHS,
        "hours": HOURS,
        "updated": HOURS,
        "size": st.integers(0, 3),
        "order": st.integers(-2, 2),
        "status": st.sampled_from([None, "s1", "s2", "ß:1"]),
        "flag": st.sampled_from([None, True, False]),
    }
)

filter_strategy = st.fixed_dictionaries(
    {},
    optional={
        "path": PATHS,
        "tags": st.lists(st.sampled_from(TAG_VALUES), max_size=2),
        "slug": SLUGS,
        "dateFrom": HOURS,
        "dateTo": HOURS,
        "status": st.sampled_from(["s1", "s2", "ß:1"]),
        "flag": st.booleans(),
        "sortBy": st.sampled_from(["created_at", "updated_at", "slug", "size_bytes", "order", "other"]),
        "sortOrder": st.sampled_from(["asc", "desc", ""]),
    },
)


def to_record(i: int, spec: dict) -> dict:
    kvs = []
    if spec["status"] is not None:
        kvs.append(string_kv("status", spec["status"]))
    if spec["flag"] is not None:
        kvs.append({"key": "flag", "valueType": "METADATA_VALUE_TYPE_BOOL", "value": {"boolValue": spec["flag"]}})
    return {
        "uploadId": f"p{i:03d}",
        "slug": spec["slug"],
        "tags": spec["tags"],
        "path": spec["path"],
        "createdAt": iso(T0 + timedelta(hours=spec["hours"])),
        "updatedAt": iso(T0 + timedelta(hours=spec["updated"])),
        "sizeBytes": str(spec["size"]),
        "order": spec["order"],
        "metadataKvs": kvs,
    }


def expected(records: list[dict], f: dict) -> list[str]:
    def keep(r):
        meta = {kv["key"]: next(iter(kv["value"].values())) for kv in r["metadataKvs"]}
        path = f.get("path", "").rstrip("/")
        return (
            (not path or r["path"] == path or r["path"].startswith(path + "/"))
            and set(f.get("tags", [])) <= set(r["tags"])
            and r["slug"].lower().startswith(f.get("slug", "").lower())
            and ("dateFrom" not in f or r["createdAt"] >= iso(T0 + timedelta(hours=f["dateFrom"])))
            and ("dateTo" not in f or r["createdAt"] <= iso(T0 + timedelta(hours=f["dateTo"])))
            and ("status" not in f or meta.get("status") == f["status"])
            and ("flag" not in f or meta.get("flag") is f["flag"])
        )

    key = SORTS.get(f.get("sortBy"), SORTS["created_at"])
    rows = sorted(filter(keep, records), key=lambda r: (key(r), r["uploadId"]), reverse=f.get("sortOrder") != "asc")
    return [r["uploadId"] for r in rows]


def to_request(f: dict) -> dict:
    request = {k: v for k, v in f.items() if k in ("path", "tags", "slug", "sortBy", "sortOrder")}
    for name in ("dateFrom", "dateTo"):
        if name in f:
            request[name] = iso(T0 + timedelta(hours=f[name]))
    metadata = []
    if "status" in f:
        metadata.append({"key": "status", "stringValue": f["status"]})
    if "flag" in f:
        metadata.append({"key": "flag", "boolValue": f["flag"]})
    if metadata:
        request["metadataFilters"] = metadata
    return request


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    specs=st.lists(upload_strategy, max_size=25),
    filters=filter_strategy,
    page_size=st.integers(1, 6),
)
def test_paged_walk_equals_python_filter_and_sort(rpc, namespace, make_key, specs, filters, page_size):
    Bucket.objects.filter(name="prop").delete()
    bucket = make_bucket(name="prop")
    records = [to_record(i, s) for i, s in enumerate(specs)]
    add(bucket, records)
    key = make_key()
    request = {"bucket": {"bucketId": str(bucket.pk)}, "pageSize": page_size, **to_request(filters)}
    seen, cursor = [], ""
    for _ in range(100):
        result = rpc(LIST, {**request, "cursor": cursor}, token=key)
        assert result.status == 200, result
        page = [u["uploadId"] for u in result.body.get("uploads", [])]
        assert len(page) <= page_size
        seen += page
        cursor = result.body.get("nextCursor", "")
        if not cursor:
            break
    assert seen == expected(records, filters)
