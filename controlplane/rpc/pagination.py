"""Opaque, signed page tokens for keyset pagination (never OFFSET).

A token is signed with SECRET_KEY and salted per list, so a client can neither forge
one nor replay one against another list or another set of filters (`binding`).
"""

from __future__ import annotations

from collections.abc import Callable

from django.core import signing

from controlplane.errors import Error

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000


def page_size(value: int, *, field: str = "pageSize", default: int = DEFAULT_PAGE_SIZE, maximum: int = MAX_PAGE_SIZE):
    if value < 0:
        raise Error.invalid_argument(field, f"must not be negative, got {value}")
    if value == 0:
        return default
    return min(value, maximum)


def encode(position, *, salt: str, binding: str = "") -> str:
    return signing.dumps({"p": position, "b": binding}, salt=salt, compress=True)


def decode(token: str, *, salt: str, binding: str = "", field: str = "pageToken"):
    if not token:
        return None
    try:
        payload = signing.loads(token, salt=salt)
    except signing.BadSignature:
        raise Error.invalid_argument(field, "is not a valid page token for this list") from None
    if not isinstance(payload, dict) or payload.get("b") != binding:
        raise Error.invalid_argument(field, "was issued for a different request; restart from the first page")
    return payload.get("p")


def keyset_page(request, *, salt: str, fetch: Callable, position_of: Callable, binding: str = "") -> tuple[list, str]:
    """One page of a list request (page_size, page_token) and the next page's token, empty on the last.

    `fetch(after, limit)` returns up to `limit` rows following the position `after` (None on the
    first page); `position_of(row)` is what the next page starts after.
    """
    limit = page_size(request.page_size)
    after = decode(request.page_token, salt=salt, binding=binding)
    rows = fetch(after, limit + 1)  # one more than a page tells whether another follows
    page = rows[:limit]
    token = encode(position_of(page[-1]), salt=salt, binding=binding) if len(rows) > limit else ""
    return page, token
