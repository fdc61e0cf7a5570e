"""mozilla-django-oidc's backend, fed by discovery and verifying ID tokens with our JWKS cache.

It runs only from the /auth/callback view (which passes `oidc_callback=True` after checking
state); for any other authenticate() call — e.g. the admin's password form — it abstains.
The Django user it returns is a thin record (name, email, is_staff for admins): what the
person may do is computed per request from the groups and scopes kept in the session.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import SuspiciousOperation
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from . import oidc


class SignIn:
    """What a completed code flow established; the callback view writes it to the session."""

    def __init__(self, identity: oidc.Identity, expires_at: float):
        self.identity = identity
        self.expires_at = expires_at


class OidcBackend(OIDCAuthenticationBackend):
    def __init__(self, *args, **kwargs):
        # The parent reads endpoints from settings at construction; ours come from discovery,
        # looked up only when a sign-in actually happens.
        self.UserModel = get_user_model()

    # The parent's attribute names, resolved lazily.
    @property
    def OIDC_OP_TOKEN_ENDPOINT(self):
        return oidc.provider().metadata()["token_endpoint"]

    @property
    def OIDC_OP_USER_ENDPOINT(self):
        return oidc.provider().metadata().get("userinfo_endpoint")

    @property
    def OIDC_RP_CLIENT_ID(self):
        return settings.OIDC_CLIENT_ID

    @property
    def OIDC_RP_CLIENT_SECRET(self):
        return settings.OIDC_CLIENT_SECRET

    def authenticate(self, request, oidc_callback=False, **kwargs):
        if not oidc_callback or request is None or kwargs.get("nonce") is None:
            return None
        self.token_info = {}
        return super().authenticate(request, **kwargs)

    def get_token(self, payload):
        if not payload.get("client_secret"):
            payload.pop("client_secret", None)  # a public client: PKCE alone
        self.token_info = super().get_token(payload)
        return self.token_info

    def verify_token(self, token, **kwargs):
        try:
            return oidc.verify_jwt(token, audiences=[settings.OIDC_CLIENT_ID], nonce=kwargs.get("nonce"), id_token=True)
        except oidc.InvalidToken as exc:
            raise SuspiciousOperation(f"ID token rejected: {exc}") from None

    def get_userinfo(self, access_token, id_token, payload):
        """ID token claims, completed by the userinfo endpoint when the provider has one."""
        self.id_token_exp = float(payload["exp"])
        claims = dict(payload)
        if self.OIDC_OP_USER_ENDPOINT and access_token:
            userinfo = super().get_userinfo(access_token, id_token, payload)
            if userinfo.get("sub") != payload["sub"]:
                raise SuspiciousOperation("userinfo is about another subject than the ID token")
            claims.update(userinfo)
        return claims

    def verify_claims(self, claims):
        return bool(claims.get("sub"))

    def filter_users_by_claims(self, claims):
        return self.UserModel.objects.filter(username=oidc.username_for(str(claims["sub"])))

    def create_user(self, claims):
        user = self.UserModel(username=oidc.username_for(str(claims["sub"])))
        user.set_unusable_password()
        return self.update_user(user, claims)

    def update_user(self, user, claims):
        # Granted scopes: only what the token response lists (an omitted `scope` grants nothing extra).
        scopes = oidc.scopes_from(self.token_info.get("scope"))
        identity = oidc.identity_from_claims(claims, scopes)
        user.first_name = identity.name[:150]
        user.email = str(claims.get("email") or "")[:254]
        # Lets the default AdminSite admit platform admins; refreshed at every sign-in.
        user.is_staff = oidc.is_admin(identity.groups, identity.scopes)
        user.save()
        self.request.cp_sign_in = SignIn(identity, expires_at=self.id_token_exp)
        return user

    def get_user(self, user_id):
        return ModelBackend.get_user(self, user_id)
