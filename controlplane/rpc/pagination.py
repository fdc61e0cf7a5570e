"""Opaque, signed page tokens for keyset pagination (never OFFSET).

A token is signed with SECRET_KEY and salted per list, so a client can neither forge
one nor replay one against another list or another set of filters (`binding`).
"""

from __future__ import annotations

from django.core import signing

from .errors import Error

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
