"""What every containers write needs: request validation and the namespace quota lock."""

from __future__ import annotations

import re

from django.db.models import QuerySet

from controlplane.errors import Error
from idempotency.services import idempotent
from namespaces.models import Namespace
from namespaces.services import lock_namespace
from namespaces.validation import json_name

from .. import selectors

__all__ = ["enforce_quota", "idempotent_create", "lock_namespace", "validate_image"]

# [registry[:port]/]path[:tag][@sha256:digest], the OCI reference grammar without its rarer corners.
_IMAGE_RE = re.compile(
    r"(?:[A-Za-z0-9.-]+(?::[0-9]{1,5})?/)?"
    r"[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*"
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?"
)
MAX_IMAGE_LENGTH = 512


def validate_image(image: str, field: str = "image") -> str:
    if not image:
        raise Error.invalid_argument(field, "is required")
    if len(image) > MAX_IMAGE_LENGTH or not _IMAGE_RE.fullmatch(image):
        raise Error.invalid_argument(field, "must be an image reference such as python:3.12 or ghcr.io/acme/app:1.0")
    return image


def idempotent_create(method: str, model):
    """@idempotent for a create of `model`: a retry gets the resource by its public id."""
    field = selectors.PUBLIC_IDS[model].field
    return idempotent(
        method,
        reference=lambda resource: getattr(resource, field),
        replay=lambda public_id: selectors.get(model, public_id),
    )


def enforce_quota(namespace: Namespace, quota: str, in_use: QuerySet) -> None:
    """Refuses one more when `in_use` already reaches the namespace's `quota` (NULL = no limit).

    The rows are counted only when the quota is set: an unset quota costs no query.
    """
    limit = getattr(namespace, quota)
    if limit is None:
        return
    current = in_use.count()
    if current >= limit:
        name = json_name(quota)
        raise Error.resource_exhausted(
            f"namespace {namespace.name!r} is at its quota {name}={limit}",
            subject=f"namespace:{namespace.name}/{name}",
            description=f"{name} is {limit}; {current} in use",
        )
