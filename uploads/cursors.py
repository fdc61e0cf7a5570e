"""nextCursor: the last row's sort key, signed and bound to the request's filters.

Payload: [sort value, uploadId, anchor]. The anchor is the first page's "now", so the
deprecated day offsets resolve to the same range on every page of one walk. The
benchmark builds a deep cursor with `encode` exactly as the server does.
"""

from __future__ import annotations

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
    return pagination.encode([value, upload_id, anchor.isoformat()], salt=SALT, binding=query.binding(scope))


def decode(query: ListQuery, scope: str, token: str) -> Position | None:
    payload = pagination.decode(token, salt=SALT, binding=query.binding(scope), field=FIELD)
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
