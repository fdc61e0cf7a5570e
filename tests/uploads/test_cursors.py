"""ListUploads cursors: signed, bound to the filters, seek pagination that never skips or repeats."""

from __future__ import annotations

import pytest

from tests.support.uploads_factory import LIST, add, ids, make_bucket, record, violation
from tests.uploads.test_list import walk


@pytest.fixture
def bucket(namespace):
    bucket = make_bucket()
    add(bucket, [record(n, tags=["even"] if n % 2 == 0 else []) for n in range(1, 31)])
    return bucket


@pytest.fixture
def listed(rpc, bucket, make_key):
    key = make_key()

    def call(**fields):
        return rpc(LIST, {"bucket": {"bucketId": str(bucket.pk)}, **fields}, token=key)

    return call


def test_walking_every_page_gives_the_full_sorted_list_once(listed):
    everything = ids(listed(pageSize=1000))
    assert len(everything) == 30
    for size in (1, 7, 29, 30):
        assert walk(listed, pageSize=size) == everything


def test_last_page_has_an_empty_next_cursor(listed):
    first = listed(pageSize=20)
    assert first.body["nextCursor"]
    last = listed(pageSize=20, cursor=first.body["nextCursor"])
    assert len(ids(last)) == 10
    assert "nextCursor" not in last.body  # proto3 JSON omits the empty string
    exact = listed(pageSize=30)
    assert "nextCursor" not in exact.body


def test_cursor_is_signed_not_plain_base64(listed):
    cursor = listed(pageSize=5).body["nextCursor"]
    assert "u0026" not in cursor  # opaque: the position is not readable
    flipped = cursor[:-3] + ("A" if cursor[-3] != "A" else "B") + cursor[-2:]
    for bad in (flipped, cursor + "x", "garbage", "e30"):
        assert violation(listed(pageSize=5, cursor=bad))["field"] == "cursor"


@pytest.mark.parametrize(
    "other",
    [
        {"tags": ["even"]},
        {"sortBy": "slug"},
        {"sortOrder": "asc"},
        {"path": "/files"},
        {"slug": "file"},
        {"daysFrom": 3},
        {"dateFrom": "2024-01-01T00:00:00Z"},
        {"metadataFilters": [{"key": "k", "stringValue": "v"}]},
    ],
)
def test_cursor_reused_with_other_filters_is_refused(listed, other):
    cursor = listed(pageSize=5).body["nextCursor"]
    field_violation = violation(listed(pageSize=5, cursor=cursor, **other))
    assert field_violation["field"] == "cursor"


def test_cursor_is_bound_to_its_bucket(listed, rpc, make_key):
    other = make_bucket(name="other")
    add(other, [record(100 + n) for n in range(3)])
    cursor = listed(pageSize=5).body["nextCursor"]
    result = rpc(LIST, {"bucket": {"bucketId": str(other.pk)}, "cursor": cursor}, token=make_key())
    assert violation(result)["field"] == "cursor"


def test_page_size_may_change_between_pages(listed):
    first = listed(pageSize=4)
    second = listed(pageSize=10, cursor=first.body["nextCursor"])
    assert ids(first) + ids(second) == ids(listed(pageSize=14))


def test_equivalent_filters_keep_the_cursor_valid(listed):
    # Tag order and a trailing slash on the path do not change the query.
    first = listed(pageSize=3, tags=["even"], path="/files/")
    second = listed(pageSize=3, tags=["even", "even"], path="/files", cursor=first.body["nextCursor"])
    assert second.status == 200 and ids(second)


@pytest.mark.parametrize("sort_by", ["created_at", "slug", "size_bytes", "order", "updated_at"])
def test_inserts_between_pages_neither_skip_nor_repeat(listed, bucket, sort_by):
    before = ids(listed(pageSize=1000, sortBy=sort_by))
    first = listed(pageSize=10, sortBy=sort_by)
    # New uploads land on both sides of the cursor, with ties on every sort field.
    add(bucket, [record(n, uploadId=f"new{n:04d}") for n in (1, 5, 12, 25, 40)])
    rest = walk_from(listed, first.body["nextCursor"], pageSize=10, sortBy=sort_by)
    seen = ids(first) + rest
    assert len(seen) == len(set(seen)), "a row was repeated"
    assert set(before) <= set(seen), "a row was skipped"
    after = ids(listed(pageSize=1000, sortBy=sort_by))
    # What follows the cursor is exactly the full list's tail from that point.
    assert rest == after[after.index(ids(first)[-1]) + 1 :]


def walk_from(listed, cursor, **fields) -> list[str]:
    seen = []
    while cursor:
        result = listed(cursor=cursor, **fields)
        seen += ids(result)
        cursor = result.body.get("nextCursor", "")
    return seen
