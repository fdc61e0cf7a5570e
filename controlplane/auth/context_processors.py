from . import oidc


def sign_in(request):
    """Lets templates (the admin login page) offer "Sign in with SSO" when OIDC is configured."""
    return {"oidc_sign_in": oidc.is_configured()}
