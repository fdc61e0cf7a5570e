"""Claims → identity → principal, one mapping for sessions and bearer tokens alike.

Groups go through every namespace's bindings (read per request, so binding changes apply at
once), and admin is the admin scope having been granted or membership of the platform-admin
group.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.utils.module_loading import import_string

from ..principal import Kind, Principal


@dataclass(frozen=True)
class Identity:
    subject: str
    name: str
    groups: frozenset[str]
    scopes: frozenset[str]


def groups_from(claims: dict) -> frozenset[str]:
    value = claims.get(settings.OIDC_GROUPS_CLAIM)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return frozenset()
    return frozenset(g for g in value if isinstance(g, str) and g)


def scopes_from(value) -> frozenset[str]:
    """`scope` as a space-separated string (RFC 6749/9068) or `scp` as a list."""
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list):
        return frozenset(s for s in value if isinstance(s, str))
    return frozenset()


def identity_from_claims(claims: dict, scopes: frozenset[str]) -> Identity:
    return Identity(
        subject=str(claims["sub"]),
        name=str(claims.get("name") or claims.get("preferred_username") or claims.get("email") or claims["sub"]),
        groups=groups_from(claims),
        scopes=scopes,
    )


def is_admin(groups: Iterable[str], scopes: Iterable[str]) -> bool:
    admin_scope, admin_group = settings.OIDC_ADMIN_SCOPE, settings.OIDC_ADMIN_GROUP
    return bool((admin_scope and admin_scope in scopes) or (admin_group and admin_group in groups))


@functools.cache
def _role_resolver(dotted: str):
    return import_string(dotted)


def principal_for(identity: Identity, *, via: str) -> Principal:
    # The role mapping lives with the namespace bindings; it is injected (OIDC_ROLE_RESOLVER)
    # so that authentication does not import the apps that depend on it.
    roles_for_groups = _role_resolver(settings.OIDC_ROLE_RESOLVER)
    return Principal(
        kind=Kind.USER,
        roles=roles_for_groups(identity.groups),
        admin=is_admin(identity.groups, identity.scopes),
        subject=identity.subject,
        issuer=settings.OIDC_ISSUER,
        display_name=identity.name,
        scopes=identity.scopes,
        via=via,
    )


def username_for(subject: str) -> str:
    """Django user name of an OIDC subject. The ':' keeps it apart from local accounts."""
    name = f"oidc:{subject}"
    if len(name) > 150:
        name = "oidc:sha256:" + hashlib.sha256(subject.encode()).hexdigest()
    return name
