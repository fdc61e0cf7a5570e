"""The configured identity provider: its discovery document and signing keys, cached per process.

Discovery (`OIDC_ISSUER` + /.well-known/openid-configuration) and the provider's keys are
fetched once per process and cached. A token signed with a key id we do not know triggers one
JWKS refetch (at most every JWKS_REFRESH_MIN_INTERVAL seconds, so random key ids cannot make
us hammer the provider); nothing else calls the provider while verifying a token.
"""

from __future__ import annotations

import threading
import time

import jwt
import requests
from django.conf import settings

from .errors import InvalidToken, OidcNotConfigured, ProviderUnavailable

DISCOVERY_MAX_AGE = 3600
JWKS_MAX_AGE = 3600
JWKS_REFRESH_MIN_INTERVAL = 10.0


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
