"""ListUploadsRequest → a validated, normalized ListQuery (no database access).

Every limit on the request (lengths, counts, page size) is enforced here with invalid_argument
naming the JSON field and the limit; the lenient rules (sort fallbacks, deprecated day offsets)
live here too.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from controlplane.errors import Error
from controlplane.rpc import pagination
from uploads.api.v1 import uploads_pb2 as pb

from ..write.records import timestamp_field

MAX_PATH = 4096
MAX_SLUG = 4096
MAX_TAGS = 1000
MAX_SORT_TEXT = 64
MAX_METADATA_FILTERS = 16
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 1000
# Deprecated day offsets: normalized into [0, MAX_DAYS] (about 100 years), never rejected.
MAX_DAYS = 36500

SORT_FIELDS = ("created_at", "updated_at", "slug", "size_bytes", "order")


@dataclass(frozen=True)
class MetadataCondition:
    key: str
    value_type: int  # pb.METADATA_VALUE_TYPE_STRING or _BOOL
    value: str | bool


@dataclass(frozen=True)
class ListQuery:
    path: str = ""
    tags: tuple[str, ...] = ()
    date_from: datetime | None = None
    date_to: datetime | None = None
    days_from: int = 0  # used only when date_from is None
    days_to: int = 0  # used only when date_to is None
    slug_prefix: str = ""  # lower-cased
    sort_by: str = "created_at"
    descending: bool = True
    metadata: tuple[MetadataCondition, ...] = ()
    page_size: int = DEFAULT_PAGE_SIZE


def parse(request: pb.ListUploadsRequest) -> ListQuery:
    _max_length("path", request.path, MAX_PATH)
    _max_length("slug", request.slug, MAX_SLUG)
    _max_length("sortBy", request.sort_by, MAX_SORT_TEXT)
    _max_length("sortOrder", request.sort_order, MAX_SORT_TEXT)
    if len(request.tags) > MAX_TAGS:
        raise Error.invalid_argument("tags", f"at most {MAX_TAGS} items, got {len(request.tags)}")
    if len(request.metadata_filters) > MAX_METADATA_FILTERS:
        raise Error.invalid_argument(
            "metadataFilters", f"at most {MAX_METADATA_FILTERS} items, got {len(request.metadata_filters)}"
        )
    date_from = timestamp_field(request, "date_from")
    date_to = timestamp_field(request, "date_to")
    days_from = 0 if date_from else _days(request.days_from)
    days_to = 0 if date_to else _days(request.days_to)
    if days_from and days_to and days_from < days_to:
        days_from, days_to = days_to, days_from  # the pair given the wrong way round
    return ListQuery(
        # "a/b/" names the same folder as "a/b"; "" and "/" mean no path filter.
        path=request.path.rstrip("/"),
        tags=tuple(sorted(set(request.tags))),
        date_from=date_from,
        date_to=date_to,
        days_from=days_from,
        days_to=days_to,
        slug_prefix=request.slug.lower(),
        sort_by=request.sort_by if request.sort_by in SORT_FIELDS else "created_at",
        descending=request.sort_order != "asc",
        metadata=tuple(_metadata_condition(f, i) for i, f in enumerate(request.metadata_filters)),
        page_size=pagination.page_size(request.page_size, default=DEFAULT_PAGE_SIZE, maximum=MAX_PAGE_SIZE),
    )


def _max_length(field: str, value: str, limit: int) -> None:
    if len(value) > limit:
        raise Error.invalid_argument(field, f"at most {limit} characters, got {len(value)}")


def _days(value: int) -> int:
    # Deprecated int32 offsets: the magnitude counts, capped; nothing is rejected.
    return min(abs(value), MAX_DAYS)


def _metadata_condition(item: pb.MetadataFilter, index: int) -> MetadataCondition:
    if not item.key:
        raise Error.invalid_argument(f"metadataFilters[{index}].key", "is required")
    kind = item.WhichOneof("value")
    if kind == "string_value":
        return MetadataCondition(item.key, pb.METADATA_VALUE_TYPE_STRING, item.string_value)
    if kind == "bool_value":
        return MetadataCondition(item.key, pb.METADATA_VALUE_TYPE_BOOL, item.bool_value)
    raise Error.invalid_argument(f"metadataFilters[{index}]", "needs stringValue or boolValue")
