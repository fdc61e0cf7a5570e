"""Reads of API keys."""

from __future__ import annotations

from django.db.models import Q

from controlplane.errors import Error
from namespaces.models import Namespace

from .models import ApiKey


def list_api_keys(*, namespace: str = "", after: tuple[str, int] | None = None, limit: int = 100) -> list[ApiKey]:
    """Newest first; keyset page after (created_at iso, id) of the previous page's last key.

    Runner keys belong to no namespace: they are listed with their runners (ListRunners)."""
    queryset = ApiKey.objects.select_related("namespace").exclude(kind=ApiKey.Kind.RUNNER)
    queryset = queryset.order_by("-created_at", "-id")
    if namespace:
        namespace_id = Namespace.objects.filter(name=namespace).values_list("pk", flat=True).first()
        if namespace_id is None:
            raise Error.not_found(f"namespace {namespace!r} not found")
        queryset = queryset.filter(namespace_id=namespace_id)  # served by (namespace, created_at, id)
    if after is not None:
        created_at, pk = after
        queryset = queryset.filter(Q(created_at__lt=created_at) | Q(created_at=created_at, id__lt=pk))
    return list(queryset[:limit])
