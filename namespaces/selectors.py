"""Reads of namespaces, shaped for the callers' access patterns (no N+1)."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from controlplane.auth import Role
from controlplane.errors import Error

from .models import GroupBinding, ImagePullSecret, InternalTarget, Namespace


def _with_children(queryset: QuerySet) -> QuerySet:
    return queryset.prefetch_related(
        Prefetch("group_bindings", queryset=GroupBinding.objects.order_by("oidc_group")),
        Prefetch("internal_targets", queryset=InternalTarget.objects.order_by("name")),
        Prefetch("image_pull_secrets", queryset=ImagePullSecret.objects.order_by("registry")),
    )


def get_namespace(name: str) -> Namespace:
    namespace = _with_children(Namespace.objects.filter(name=name)).first()
    if namespace is None:
        raise Error.not_found(f"namespace {name!r} not found")
    return namespace


def list_namespaces(*, after: str = "", limit: int = 100) -> list[Namespace]:
    """Keyset page ordered by name: the rows after `after`, at most `limit` of them."""
    queryset = Namespace.objects.order_by("name")
    if after:
        queryset = queryset.filter(name__gt=after)
    return list(_with_children(queryset)[:limit])


def roles_for_groups(groups: frozenset[str] | set[str]) -> dict[str, Role]:
    """Maps OIDC groups through every namespace's bindings; the highest role wins per namespace."""
    roles: dict[str, Role] = {}
    if not groups:
        return roles
    rows = GroupBinding.objects.filter(oidc_group__in=groups).values_list("namespace__name", "role")
    for namespace, role in rows:
        role = Role(role)
        if role > roles.get(namespace, 0):
            roles[namespace] = role
    return roles
