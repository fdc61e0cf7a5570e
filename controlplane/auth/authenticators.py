"""Authenticators: credential → principal (Kubernetes' split from authorizers).

Bearer tokens go to the first authenticator in settings.BEARER_AUTHENTICATORS that
accepts them (API keys, then OIDC JWTs); each implements `BearerAuthenticator`. The
cp_session cookie goes to the session authenticator. A header, when present, wins over
the cookie.
"""

from __future__ import annotations

import time
from functools import cache
from typing import Protocol, runtime_checkable

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from controlplane.observability import metrics

from . import oidc
from .exceptions import AuthenticationFailed
from .principal import Kind, Principal

__all__ = ["AuthenticationFailed", "BearerAuthenticator", "SessionAuthenticator", "authenticate"]


@runtime_checkable
class BearerAuthenticator(Protocol):
    """The contract of each class named in settings.BEARER_AUTHENTICATORS (instantiated once,
    without arguments), as Django's BaseBackend is for authentication backends."""

    def accepts(self, token: str) -> bool:
        """Whether this authenticator decides on `token`: the first that accepts it does. Cheap
        (no I/O): it runs for every bearer call, for each authenticator before the one that accepts."""
        ...

    def authenticate(self, token: str) -> Principal:
        """The principal of `token`; raises AuthenticationFailed (with a message safe to show)."""
        ...


@cache
def bearer_authenticators() -> tuple[BearerAuthenticator, ...]:
    authenticators = tuple(import_string(path)() for path in settings.BEARER_AUTHENTICATORS)
    for path, authenticator in zip(settings.BEARER_AUTHENTICATORS, authenticators, strict=True):
        if not isinstance(authenticator, BearerAuthenticator):
            raise ImproperlyConfigured(f"BEARER_AUTHENTICATORS: {path} lacks accepts(token) or authenticate(token)")
    return authenticators


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
    # META, not request.headers: building that mapping of every header costs more than the rest
    # of a cached key's authentication, and bearer RPCs read no other header through it.
    header = request.META.get("HTTP_AUTHORIZATION")
    used = "bearer"  # which authenticator decided, for the metrics
    try:
        if header is not None:
            token = parse_bearer(header)
            for authenticator in bearer_authenticators():
                if authenticator.accepts(token):
                    used = getattr(authenticator, "name", type(authenticator).__name__)
                    principal = authenticator.authenticate(token)
                    break
            else:
                raise AuthenticationFailed("unsupported bearer token")
        elif settings.SESSION_COOKIE_NAME in request.COOKIES:
            used = "session"
            principal = session_authenticator().authenticate(request)
        else:
            return Principal.anonymous(
                "a credential is required: Authorization: Bearer <token> or the cp_session cookie"
            )
    except AuthenticationFailed as exc:
        metrics.record_authentication(used, "failure")
        return Principal.anonymous(str(exc))
    metrics.record_authentication(used, "success")
    return principal


class SessionAuthenticator:
    """cp_session → principal.

    A session opened by OIDC sign-in keeps the person's subject, groups and granted scopes
    (never a token); the groups are mapped through the namespace bindings on every request,
    so binding changes apply to live sessions at once. The session ends when the ID token
    does (or OIDC_SESSION_MAX_AGE). A password session of a local superuser (the break-glass
    account) is an admin principal; other local accounts hold no namespace.
    """

    OIDC_KEY = "cp_oidc"

    @classmethod
    def store(cls, session, identity, expires_at: float) -> None:
        session[cls.OIDC_KEY] = {
            "sub": identity.subject,
            "name": identity.name,
            "groups": sorted(identity.groups),
            "scopes": sorted(identity.scopes),
            "expires_at": expires_at,
        }

    def authenticate(self, request) -> Principal:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            raise AuthenticationFailed("session is missing, expired or signed out")
        data = request.session.get(self.OIDC_KEY)
        if data is not None:
            if time.time() >= data["expires_at"]:
                raise AuthenticationFailed("session has expired; sign in again at /auth/login")
            identity = oidc.Identity(
                subject=data["sub"],
                name=data["name"],
                groups=frozenset(data["groups"]),
                scopes=frozenset(data["scopes"]),
            )
            return oidc.principal_for(identity, via="session")
        name = user.get_username()
        if user.is_superuser and user.is_active:
            return Principal(kind=Kind.USER, admin=True, subject=name, display_name=name, via="session")
        return Principal(kind=Kind.USER, subject=name, display_name=user.get_full_name() or name, via="session")
