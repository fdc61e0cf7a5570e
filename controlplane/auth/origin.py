"""Cross-site protection for cookie-authenticated calls.

Browsers attach cp_session to cross-site requests in some cases; bearer tokens are never
attached automatically. So a cookie-authenticated unsafe request must come from the
service's own origin or one listed in RPC_ALLOWED_ORIGINS / CSRF_TRUSTED_ORIGINS.
"""

from django.conf import settings


def allowed_origins(request) -> set[str]:
    own = f"{request.scheme}://{request.get_host()}"
    return {own, *settings.RPC_ALLOWED_ORIGINS, *settings.CSRF_TRUSTED_ORIGINS}


def is_same_origin_request(request) -> bool:
    origin = request.headers.get("Origin")
    if origin is not None:
        return origin in allowed_origins(request)
    # No Origin header: non-browser clients; browsers that omit it still send Sec-Fetch-Site.
    return request.headers.get("Sec-Fetch-Site", "same-origin") in ("same-origin", "none")
