"""OIDC for humans: provider discovery, the JWKS cache, JWT verification, claims → principal.

Discovery (`OIDC_ISSUER` + /.well-known/openid-configuration) and the provider's keys are
fetched once per process and cached. A token signed with a key id we do not know triggers one
JWKS refetch (at most every JWKS_REFRESH_MIN_INTERVAL seconds, so random key ids cannot make
us hammer the provider); nothing else calls the provider while verifying a token.

The same mapping serves sessions and bearer tokens: groups go through every namespace's
bindings (read per request, so binding changes apply at once), and admin is the admin scope
having been granted or membership of the platform-admin group.
"""

from __future__ import annotations

import functools
import hashlib
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass

import jwt
import requests
from django.conf import settings
from django.utils.module_loading import import_string

from .exceptions import AuthenticationFailed
from .principal import Kind, Principal

# Only asymmetric algorithms: a token is never verified with a shared secret or unsigned.
ALLOWED_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
DISCOVERY_MAX_AGE = 3600
JWKS_MAX_AGE = 3600
JWKS_REFRESH_MIN_INTERVAL = 10.0


class OidcNotConfigured(Exception):
    pass


class ProviderUnavailable(Exception):
    """The identity provider could not be reached or answered nonsense."""


class InvalidToken(Exception):
    """The token is not acceptable; the message is safe to show the caller."""


def is_configured() -> bool:
    return bool(settings.OIDC_ISSUER and settings.OIDC_CLIENT_ID)


def requested_scopes() -> str:
    scopes = list(dict.fromkeys(settings.OIDC_SCOPES.split()))
    if "openid" not in scopes:
        scopes.insert(0, "openid")
    if settings.OIDC_ADMIN_SCOPE and settings.OIDC_ADMIN_SCOPE not in scopes:
        scopes.append(settings.OIDC_ADMIN_SCOPE)
    return " ".join(scopes)


def _get_json(url: str) -> dict:
    try:
        response = requests.get(url, timeout=settings.OIDC_TIMEOUT, headers={"Accept": "application/json"})
        response.raise_for_status()
        body = response.json()
    except (requests.RequestException, ValueError) as exc:
        raise ProviderUnavailable(f"identity provider request failed: {url}: {exc}") from exc
    if not isinstance(body, dict):
        raise ProviderUnavailable(f"identity provider answered a non-object at {url}")
    return body


class ProviderCache:
    """Discovery document and signing keys of the configured issuer, per process."""

    def __init__(self, issuer: str):
        self.issuer = issuer
        self._lock = threading.RLock()
        self._metadata: dict | None = None
        self._metadata_at = 0.0
        self._keys: dict[str, tuple[jwt.PyJWK, str | None]] = {}
        self._keys_at = float("-inf")

    def metadata(self) -> dict:
        with self._lock:
            if self._metadata is None or time.monotonic() - self._metadata_at > DISCOVERY_MAX_AGE:
                url = self.issuer.rstrip("/") + "/.well-known/openid-configuration"
                metadata = _get_json(url)
                if metadata.get("issuer") != self.issuer:
                    raise ProviderUnavailable(
                        f"discovery at {url} names issuer {metadata.get('issuer')!r}, expected {self.issuer!r}"
                    )
                for name in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
                    if not isinstance(metadata.get(name), str):
                        raise ProviderUnavailable(f"discovery at {url} lacks {name}")
                self._metadata, self._metadata_at = metadata, time.monotonic()
            return self._metadata

    def key(self, kid: str) -> tuple[jwt.PyJWK, str | None]:
        """The signing key `kid` and its declared alg; refetches the JWKS once when `kid` is unknown."""
        with self._lock:
            stale = time.monotonic() - self._keys_at > JWKS_MAX_AGE
            if kid in self._keys and not stale:
                return self._keys[kid]
            if stale or time.monotonic() - self._keys_at >= JWKS_REFRESH_MIN_INTERVAL:
                self._keys_at = time.monotonic()  # also on failure: no retry storm
                self._keys = self._fetch_keys()
            if kid not in self._keys:
                raise InvalidToken("token is signed with a key the identity provider does not publish")
            return self._keys[kid]

    def _fetch_keys(self) -> dict[str, tuple[jwt.PyJWK, str | None]]:
        jwks = _get_json(self.metadata()["jwks_uri"])
        keys = {}
        for data in jwks.get("keys", []):
            if not isinstance(data, dict) or data.get("use", "sig") != "sig" or "kid" not in data:
                continue
            try:
                keys[str(data["kid"])] = (jwt.PyJWK(data), data.get("alg"))
            except jwt.PyJWTError:
                continue  # a key type or algorithm we cannot use
        return keys


_cache_lock = threading.Lock()
_caches: dict[str, ProviderCache] = {}


def provider() -> ProviderCache:
    if not is_configured():
        raise OidcNotConfigured("human sign-in is not configured (OIDC_ISSUER, OIDC_CLIENT_ID)")
    with _cache_lock:
        cache = _caches.get(settings.OIDC_ISSUER)
        if cache is None:
            cache = _caches[settings.OIDC_ISSUER] = ProviderCache(settings.OIDC_ISSUER)
        return cache


def reset_caches() -> None:
    with _cache_lock:
        _caches.clear()


def verify_jwt(token: str, *, audiences: Iterable[str], nonce: str | None = None, id_token: bool = False) -> dict:
    """Verifies signature (provider JWKS), iss, aud/azp, exp, nbf, iat; returns the claims."""
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        raise InvalidToken("malformed token") from None
    alg, kid = header.get("alg"), header.get("kid")
    if alg not in ALLOWED_ALGORITHMS:
        raise InvalidToken(f"token algorithm {alg!r} is not accepted")
    if not isinstance(kid, str) or not kid:
        raise InvalidToken("token has no key id (kid)")
    cache = provider()
    key, key_alg = cache.key(kid)
    if key_alg is not None and key_alg != alg:
        raise InvalidToken("token algorithm does not match its key")
    audiences = [a for a in audiences if a]
    try:
        claims = jwt.decode(
            token,
            key.key,
            algorithms=[alg],
            audience=audiences,
            issuer=cache.issuer,
            leeway=settings.OIDC_CLOCK_SKEW_SECONDS,
            options={"require": ["iss", "sub", "aud", "exp", "iat"]},
        )
    except jwt.ExpiredSignatureError:
        raise InvalidToken("token has expired") from None
    except jwt.ImmatureSignatureError:
        raise InvalidToken("token is not valid yet") from None
    except jwt.InvalidAudienceError:
        raise InvalidToken("token is not meant for this service (audience)") from None
    except jwt.InvalidIssuerError:
        raise InvalidToken("token is from another issuer") from None
    except jwt.InvalidSignatureError:
        raise InvalidToken("token signature is invalid") from None
    except jwt.PyJWTError as exc:
        raise InvalidToken(f"invalid token: {exc}") from None
    azp = claims.get("azp")
    aud = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
    if id_token and len(aud) > 1 and azp is None:
        raise InvalidToken("ID token with several audiences lacks azp")
    if azp is not None and azp not in {settings.OIDC_CLIENT_ID, *audiences}:
        raise InvalidToken("token was issued to another client (azp)")
    if nonce is not None and claims.get("nonce") != nonce:
        raise InvalidToken("ID token nonce does not match the sign-in request")
    return claims


# ---- claims → principal -----------------------------------------------------------------


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


class JwtAuthenticator:
    """Bearer tokens that are not cpk_ keys: JWTs from the identity provider, verified locally."""

    name = "oidc_jwt"  # the authenticator label of controlplane_authentications_total

    def accepts(self, token: str) -> bool:
        return not token.startswith("cpk_")

    def authenticate(self, token: str) -> Principal:
        if not is_configured():
            raise AuthenticationFailed("bearer tokens other than API keys need OIDC, which is not configured")
        try:
            claims = verify_jwt(token, audiences=settings.OIDC_AUDIENCES or [settings.OIDC_CLIENT_ID])
        except InvalidToken as exc:
            raise AuthenticationFailed(str(exc)) from None
        except ProviderUnavailable:
            raise AuthenticationFailed("the identity provider's keys are unavailable; try again") from None
        scopes = scopes_from(claims.get("scope", claims.get("scp")))
        return principal_for(identity_from_claims(claims, scopes), via="bearer")
