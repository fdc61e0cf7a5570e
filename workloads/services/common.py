"""What every containers write needs: request validation and the namespace quota lock."""

from __future__ import annotations

import re

from controlplane.errors import Error
from namespaces.models import Namespace
from namespaces.services import json_name, lock_namespace

__all__ = ["enforce_quota", "lock_namespace", "validate_image"]

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


def enforce_quota(namespace: Namespace, quota: str, current: int) -> None:
    """Refuses one more when `current` already reaches the namespace's `quota` (NULL = no limit)."""
    limit = getattr(namespace, quota)
    if limit is not None and current >= limit:
        name = json_name(quota)
        raise Error.resource_exhausted(
            f"namespace {namespace.name!r} is at its quota {name}={limit}",
            subject=f"namespace:{namespace.name}/{name}",
            description=f"{name} is {limit}; {current} in use",
        )
