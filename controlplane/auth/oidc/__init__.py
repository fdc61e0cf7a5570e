"""OIDC for humans, by concern: the provider's discovery and keys (discovery), JWT checks (tokens),
claims → principal (claims), and the bearer authenticator (authenticator)."""

from .authenticator import JwtAuthenticator
from .claims import Identity, groups_from, identity_from_claims, is_admin, principal_for, scopes_from, username_for
from .discovery import ProviderCache, is_configured, provider, requested_scopes, reset_caches
from .errors import InvalidToken, OidcNotConfigured, ProviderUnavailable
from .tokens import ALLOWED_ALGORITHMS, verify_jwt

__all__ = [
    "ALLOWED_ALGORITHMS",
    "Identity",
    "InvalidToken",
    "JwtAuthenticator",
    "OidcNotConfigured",
    "ProviderCache",
    "ProviderUnavailable",
    "groups_from",
    "identity_from_claims",
    "is_admin",
    "is_configured",
    "principal_for",
    "provider",
    "requested_scopes",
    "reset_caches",
    "scopes_from",
    "username_for",
    "verify_jwt",
]
