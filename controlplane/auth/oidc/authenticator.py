"""Bearer JWTs from the identity provider, verified locally: the last of BEARER_AUTHENTICATORS."""

from __future__ import annotations

from django.conf import settings

from ..exceptions import AuthenticationFailed
from ..principal import Principal
from .claims import identity_from_claims, principal_for, scopes_from
from .discovery import is_configured
from .errors import InvalidToken, ProviderUnavailable
from .tokens import verify_jwt


class JwtAuthenticator:
    """Any bearer token the authenticators before it declined (API keys take their cpk_ tokens
    first), as a JWT from the identity provider. It must come last in BEARER_AUTHENTICATORS."""

    name = "oidc_jwt"  # the authenticator label of controlplane_authentications_total

    def accepts(self, token: str) -> bool:
        return True

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
