"""nextCursor: the last row's sort key, sealed (opaque) and bound to the request's filters.

Payload: [sort value, uploadId, anchor]. The anchor is the first page's "now", so the
deprecated day offsets resolve to the same range on every page of one walk. The
benchmark builds a deep cursor with `encode` exactly as the server does.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime

from django.utils.dateparse import parse_datetime

from controlplane.errors import Error
from controlplane.rpc import pagination

from .query import ListQuery

SALT = "uploads.ListUploads"
FIELD = "cursor"


@dataclass(frozen=True)
class Position:
    value: object  # the sort field's value in the last row of the previous page
    upload_id: str
    anchor: datetime


def encode(query: ListQuery, scope: str, *, value, upload_id: str, anchor: datetime) -> str:
    if isinstance(value, datetime):
        value = value.isoformat()
    return pagination.encode([value, upload_id, anchor.isoformat()], salt=SALT, binding=binding(query, scope))


def decode(query: ListQuery, scope: str, token: str) -> Position | None:
    payload = pagination.decode(token, salt=SALT, binding=binding(query, scope), field=FIELD)
    if payload is None:
        return None
    try:
        value, upload_id, anchor = payload
        anchor = parse_datetime(anchor)
        if query.sort_by in ("created_at", "updated_at"):
            value = parse_datetime(value)
        expected = str if query.sort_by == "slug" else (int if query.sort_by in ("size_bytes", "order") else datetime)
        if not isinstance(value, expected) or not isinstance(upload_id, str) or anchor is None:
            raise ValueError
    except (TypeError, ValueError):
        # Signed by us, so only a token from an older server version lands here.
        raise Error.invalid_argument(FIELD, "is not a valid cursor for this list") from None
    return Position(value=value, upload_id=upload_id, anchor=anchor)


def binding(query: ListQuery, scope: str) -> str:
    """What a cursor is bound to: the scope (bucket) and every filter and sort."""
    canonical = {
        "scope": scope,
        "path": query.path,
        "tags": sorted(query.tags),
        "dateFrom": query.date_from.isoformat() if query.date_from else None,
        "dateTo": query.date_to.isoformat() if query.date_to else None,
        "daysFrom": query.days_from,
        "daysTo": query.days_to,
        "slug": query.slug_prefix,
        "sort": [query.sort_by, query.descending],
        "metadata": sorted([m.key, m.value_type, m.value] for m in query.metadata),
    }
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]
