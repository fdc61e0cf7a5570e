"""Opaque page tokens for keyset pagination (never OFFSET).

A token is the position after which the next page starts, sealed with AES-GCM under a key
derived from SECRET_KEY and the list's salt: a client can neither read it nor forge it, and
a token of one list does not open for another (the salt is also the associated data). The
request's `binding` (namespace, filters) is sealed inside and compared on the way back.
SECRET_KEY_FALLBACKS still open tokens issued before a key rotation.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Callable

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from django.conf import settings
from django.utils.crypto import salted_hmac

from .errors import Error

_NONCE_BYTES = 12
_TAG_BYTES = 16

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000


def page_size(value: int, *, field: str = "pageSize", default: int = DEFAULT_PAGE_SIZE, maximum: int = MAX_PAGE_SIZE):
    if value < 0:
        raise Error.invalid_argument(field, f"must not be negative, got {value}")
    if value == 0:
        return default
    return min(value, maximum)


def encode(position, *, salt: str, binding: str = "") -> str:
    nonce = os.urandom(_NONCE_BYTES)
    plaintext = json.dumps({"p": position, "b": binding}, separators=(",", ":")).encode()
    sealed = nonce + _ciphers(salt)[0].encrypt(nonce, plaintext, salt.encode())
    return base64.urlsafe_b64encode(sealed).rstrip(b"=").decode()


def decode(token: str, *, salt: str, binding: str = "", field: str = "pageToken"):
    if not token:
        return None
    payload = _open(token, salt)
    if payload is None:
        raise Error.invalid_argument(field, "is not a valid page token for this list")
    if not isinstance(payload, dict) or payload.get("b") != binding:
        raise Error.invalid_argument(field, "was issued for a different request; restart from the first page")
    return payload.get("p")


def _open(token: str, salt: str):
    try:
        sealed = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (ValueError, binascii.Error):
        return None
    if len(sealed) < _NONCE_BYTES + _TAG_BYTES:
        return None
    for cipher in _ciphers(salt):
        try:
            plaintext = cipher.decrypt(sealed[:_NONCE_BYTES], sealed[_NONCE_BYTES:], salt.encode())
        except InvalidTag:
            continue
        return json.loads(plaintext)
    return None


def _ciphers(salt: str) -> list[AESGCM]:
    keys = [
        salted_hmac("controlplane.pagination", salt, secret=secret, algorithm="sha256").digest()
        for secret in [settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS]
    ]
    return [AESGCM(key) for key in keys]


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
