"""Browser sign-in routes hosted by the API: /auth/login, /auth/callback, /auth/me, /auth/logout.

The authorization-code flow with PKCE (S256), state and nonce runs between this service and
the identity provider: the browser only follows redirects and carries the cp_session cookie,
it never sees a token.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

import requests
from django.conf import settings
from django.contrib import auth
from django.core.exceptions import SuspiciousOperation
from django.http import HttpResponse, HttpResponseRedirect, JsonResponse
from django.utils.cache import add_never_cache_headers, patch_vary_headers
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET
from django.views.generic import View
from mozilla_django_oidc.utils import import_from_settings
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from controlplane.connect_errors import error_response
from controlplane.errors import Code, Error

from . import oidc
from .authenticators import SessionAuthenticator
from .identity import principal_to_json

logger = logging.getLogger("controlplane.auth")

BACKEND = "controlplane.auth.backends.OidcBackend"
DEFAULT_NEXT = "/auth/me"
STATE_MAX_AGE = 600  # seconds a sign-in may take between /auth/login and /auth/callback


def uncached_error(error: Error) -> HttpResponse:
    """The Connect error RPCs answer (controlplane.connect_errors), never cached."""
    response = error_response(error)
    add_never_cache_headers(response)
    return response


def not_configured() -> HttpResponse:
    return uncached_error(
        Error.unimplemented("human sign-in is not configured on this deployment (set OIDC_ISSUER and OIDC_CLIENT_ID)")
    )


def provider_unavailable() -> HttpResponse:
    return uncached_error(Error(Code.UNAVAILABLE, "the identity provider cannot be reached; try again later"))


def safe_next(value: str | None) -> str | None:
    """Only a local path: no scheme, no host, no protocol-relative or backslash tricks."""
    if not value or not value.startswith("/") or value.startswith(("//", "/\\")):
        return None
    if not url_has_allowed_host_and_scheme(value, allowed_hosts=set(), require_https=False):
        return None
    return value


class LoginView(OIDCAuthenticationRequestView):
    """GET /auth/login[?next=/local/path]: redirects to the provider's authorization endpoint."""

    def __init__(self, **kwargs):
        View.__init__(self, **kwargs)  # the parent reads endpoints here; ours come from discovery in get()

    @staticmethod
    def get_settings(attr, *args):
        if attr == "OIDC_RP_SCOPES":
            return oidc.requested_scopes()
        return import_from_settings(attr, *args)

    def get(self, request):
        if not oidc.is_configured():
            return not_configured()
        try:
            self.OIDC_OP_AUTH_ENDPOINT = oidc.provider().metadata()["authorization_endpoint"]
        except oidc.ProviderUnavailable:
            logger.exception("OIDC discovery failed")
            return provider_unavailable()
        self.OIDC_RP_CLIENT_ID = settings.OIDC_CLIENT_ID
        response = super().get(request)
        request.session["oidc_login_next"] = safe_next(request.GET.get("next"))
        add_never_cache_headers(response)
        return response


class CallbackView(OIDCAuthenticationCallbackView):
    """GET /auth/callback?code&state[&iss]: checks state, exchanges the code (with the PKCE
    verifier), verifies the ID token (nonce included), then starts a fresh session."""

    def get(self, request):
        if not oidc.is_configured():
            return not_configured()
        state = request.GET.get("state")
        states = request.session.get("oidc_states")
        entry = states.pop(state, None) if isinstance(states, dict) and state else None
        if entry is not None:
            # Each state is usable once, also when this attempt fails: consumed before any check.
            request.session["oidc_states"] = states
            request.session.save()
        # RFC 9207: providers may name themselves; when they do it must be our issuer.
        if "iss" in request.GET and request.GET["iss"] != settings.OIDC_ISSUER:
            return self.failure("the authorization response comes from another issuer")
        if request.GET.get("error"):
            return self.failure(f"the identity provider refused sign-in: {request.GET['error'][:100]}")
        if entry is None:
            return self.failure("unknown, forged or already used state; start again at /auth/login")
        if time.time() - entry.get("added_on", 0) > STATE_MAX_AGE:
            return self.failure("the sign-in took too long; start again at /auth/login")
        if not request.GET.get("code"):
            return self.failure("the authorization response has no code")
        # Reload the session after the slow exchange below (as the parent view does).
        request.session = request.session.__class__(request.session.session_key)
        try:
            user = auth.authenticate(
                request=request, oidc_callback=True, nonce=entry["nonce"], code_verifier=entry.get("code_verifier")
            )
        except SuspiciousOperation as exc:
            logger.warning("OIDC sign-in rejected: %s", exc)
            return self.failure(str(exc))
        except oidc.ProviderUnavailable:
            logger.exception("OIDC provider unavailable during sign-in")
            return provider_unavailable()
        except requests.RequestException as exc:
            logger.warning("OIDC code exchange failed: %s", exc)
            return self.failure("the identity provider did not accept the authorization code")
        sign_in = getattr(request, "cp_sign_in", None)
        if user is None or not user.is_active or sign_in is None:
            return self.failure("sign-in was not accepted")
        self.user = user
        return self.login_success()

    def login_success(self):
        request = self.request
        sign_in = request.cp_sign_in
        expires_at = min(sign_in.expires_at, time.time() + settings.OIDC_SESSION_MAX_AGE)
        if expires_at <= time.time() + 5:
            return self.failure("the ID token has already expired")
        next_url = safe_next(request.session.get("oidc_login_next")) or DEFAULT_NEXT
        # Always a new session key (login() cycles it), even when the same user signs in again.
        auth.login(request, self.user, backend=BACKEND)
        request.session.pop("oidc_login_next", None)
        SessionAuthenticator.store(request.session, sign_in.identity, expires_at)
        request.session.set_expiry(datetime.fromtimestamp(expires_at, tz=UTC))
        response = HttpResponseRedirect(next_url)
        add_never_cache_headers(response)
        return response

    def failure(self, message: str) -> HttpResponse:
        return uncached_error(Error.unauthenticated(f"sign-in failed: {message}"))


@require_GET
def me(request):
    """The resolved principal of whoever calls: cookie or bearer token alike."""
    principal = request.principal
    if not principal.is_authenticated:
        response = uncached_error(Error.unauthenticated(principal.failure or "a credential is required"))
        response["WWW-Authenticate"] = 'Bearer realm="controlplane"'
    else:
        response = JsonResponse(principal_to_json(principal))
        add_never_cache_headers(response)
    patch_vary_headers(response, ("Cookie", "Authorization"))
    return response


@require_GET
def logout(request):
    """Ends the session server-side (the row is deleted) and clears the cp_session cookie."""
    auth.logout(request)
    next_url = safe_next(request.GET.get("next"))
    response = HttpResponseRedirect(next_url) if next_url else JsonResponse({"signedOut": True})
    add_never_cache_headers(response)
    return response
