"""JWT verification against the provider's published keys (discovery.py): signature, iss,
aud/azp, exp, nbf, iat, and the nonce of an ID token."""

from __future__ import annotations

from collections.abc import Iterable

import jwt
from django.conf import settings

from .discovery import provider
from .errors import InvalidToken

# Only asymmetric algorithms: a token is never verified with a shared secret or unsigned.
ALLOWED_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")


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
