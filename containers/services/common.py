"""What every containers write needs: request validation and the namespace quota lock."""

from __future__ import annotations

import re

from controlplane.rpc import Error
from namespaces.models import Namespace
from namespaces.services import validate_namespace_name

# [registry[:port]/]path[:tag][@sha256:digest], the OCI reference grammar without its rarer corners.
_IMAGE_RE = re.compile(
    r"^(?:[A-Za-z0-9.-]+(?::[0-9]{1,5})?/)?"
    r"[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*"
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$"
)
MAX_IMAGE_LENGTH = 512


def validate_image(image: str, field: str = "image") -> str:
    if not image:
        raise Error.invalid_argument(field, "is required")
    if len(image) > MAX_IMAGE_LENGTH or not _IMAGE_RE.match(image):
        raise Error.invalid_argument(field, "must be an image reference such as python:3.12 or ghcr.io/acme/app:1.0")
    return image


def lock_namespace(name: str) -> Namespace:
    """Locks the namespace row until the transaction ends: creates of one namespace serialise here,
    so a count taken after the lock cannot be overtaken by a concurrent create.
    (SQLite has no row locks; its transactions start IMMEDIATE, which serialises all writers.)"""
    validate_namespace_name(name)
    try:
        return Namespace.objects.select_for_update().get(name=name)
    except Namespace.DoesNotExist:
        raise Error.not_found(f"namespace {name!r} not found") from None


def enforce_quota(namespace: Namespace, quota: str, current: int) -> None:
    """Refuses one more when `current` already reaches the namespace's `quota` (NULL = no limit)."""
    limit = getattr(namespace, quota)
    if limit is not None and current >= limit:
        json_name = _camel(quota)
        raise Error.resource_exhausted(
            f"namespace {namespace.name!r} is at its quota {json_name}={limit}",
            subject=f"namespace:{namespace.name}/{json_name}",
            description=f"{json_name} is {limit}; {current} in use",
        )


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)
