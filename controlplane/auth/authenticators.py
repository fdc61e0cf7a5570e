"""Authenticators: credential → principal (Kubernetes' split from authorizers).

Bearer tokens go to the first authenticator in settings.BEARER_AUTHENTICATORS that
accepts them (cpk_ API keys, and later OIDC JWTs). The cp_session cookie goes to the
session authenticator. A header, when present, wins over the cookie.
"""

from __future__ import annotations

from functools import cache

from django.conf import settings
from django.utils.module_loading import import_string

from .principal import Kind, Principal, Role


class AuthenticationFailed(Exception):
    """The credential was presented but is not valid; the message is safe to show."""


@cache
def bearer_authenticators() -> tuple:
    return tuple(import_string(path)() for path in settings.BEARER_AUTHENTICATORS)


@cache
def session_authenticator():
    return import_string(settings.SESSION_AUTHENTICATOR)()


def parse_bearer(header: str) -> str:
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        raise AuthenticationFailed("malformed Authorization header; expected 'Bearer <token>'")
    return token


def authenticate(request) -> Principal:
    header = request.headers.get("Authorization")
    try:
        if header is not None:
            token = parse_bearer(header)
            for authenticator in bearer_authenticators():
                if authenticator.accepts(token):
                    return authenticator.authenticate(token)
            raise AuthenticationFailed("unsupported bearer token")
        if settings.SESSION_COOKIE_NAME in request.COOKIES:
            return session_authenticator().authenticate(request)
    except AuthenticationFailed as exc:
        return Principal.anonymous(str(exc))
    return Principal.anonymous("a credential is required: Authorization: Bearer <token> or the cp_session cookie")


class SessionAuthenticator:
    """cp_session → the Django user of that session.

    A superuser (the break-glass operator account) is an admin principal. Other users
    map their OIDC groups, kept in the session at sign-in, through namespace bindings.
    """

    GROUPS_KEY = "cp_oidc_groups"
    ADMIN_KEY = "cp_admin"

    def authenticate(self, request) -> Principal:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            raise AuthenticationFailed("session is missing, expired or signed out")
        if user.is_superuser and user.is_active:
            return Principal(
                kind=Kind.USER, admin=True, subject=user.get_username(), display_name=user.get_username(), via="session"
            )
        return self.principal_for_user(request, user)

    def principal_for_user(self, request, user) -> Principal:
        from namespaces.selectors import roles_for_groups

        groups = frozenset(request.session.get(self.GROUPS_KEY, ()))
        roles: dict[str, Role] = roles_for_groups(groups)
        return Principal(
            kind=Kind.USER,
            roles=roles,
            admin=bool(request.session.get(self.ADMIN_KEY, False)),
            subject=user.get_username(),
            display_name=user.get_full_name() or user.get_username(),
            via="session",
        )
