"""Reads of API keys."""

from __future__ import annotations

from django.db.models import Q

from controlplane.errors import Error
from namespaces.models import Namespace

from .models import ApiKey


def list_api_keys(*, namespace: str = "", after: tuple[str, int] | None = None, limit: int = 100) -> list[ApiKey]:
    """Newest first; keyset page after (created_at iso, id) of the previous page's last key."""
    queryset = ApiKey.objects.select_related("namespace").order_by("-created_at", "-id")
    if namespace:
        if not Namespace.objects.filter(name=namespace).exists():
            raise Error.not_found(f"namespace {namespace!r} not found")
        queryset = queryset.filter(namespace__name=namespace)
    if after is not None:
        created_at, pk = after
        queryset = queryset.filter(Q(created_at__lt=created_at) | Q(created_at=created_at, id__lt=pk))
    return list(queryset[:limit])
