"""The one place credentials are read (request.principal), and the browser-only middleware.

Django's session, user, CSRF, messages and framing middleware serve the console and
cookie-authenticated calls. An RPC with a bearer token uses none of them: the header wins
over any cookie, so its session is never read, it renders no page and sets no cookie. The
versions here step aside for such calls (is_bearer_rpc) and run as usual for everything
else, so the console keeps its sessions, CSRF protection and X-Frame-Options.
"""

import re

from django.contrib.auth import middleware as auth
from django.contrib.messages import middleware as messages
from django.contrib.sessions import middleware as sessions
from django.middleware import clickjacking, csrf
from django.utils.functional import SimpleLazyObject

from controlplane.routes import RPC_ROUTE

from .authenticators import authenticate

_RPC_PATH = re.compile("/" + RPC_ROUTE)
_BEARER_RPC = "controlplane.bearer_rpc"


def is_bearer_rpc(request) -> bool:
    """An RPC path with an Authorization header (decided once per request)."""
    environ = request.META
    answer = environ.get(_BEARER_RPC)
    if answer is None:
        answer = environ[_BEARER_RPC] = "HTTP_AUTHORIZATION" in environ and bool(_RPC_PATH.fullmatch(request.path_info))
    return answer


class PrincipalMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.principal = SimpleLazyObject(lambda: authenticate(request))
        return self.get_response(request)


def browser_only(middleware: type) -> type:
    """`middleware`, not run for bearer RPC calls (see the module docstring)."""

    class BrowserOnly(middleware):
        def __call__(self, request):
            if is_bearer_rpc(request):
                return self.get_response(request)
            return super().__call__(request)

    BrowserOnly.__name__ = BrowserOnly.__qualname__ = middleware.__name__
    BrowserOnly.__doc__ = f"{middleware.__module__}.{middleware.__name__}, skipped by bearer RPC calls."
    return BrowserOnly


SessionMiddleware = browser_only(sessions.SessionMiddleware)
CsrfViewMiddleware = browser_only(csrf.CsrfViewMiddleware)
AuthenticationMiddleware = browser_only(auth.AuthenticationMiddleware)
MessageMiddleware = browser_only(messages.MessageMiddleware)
XFrameOptionsMiddleware = browser_only(clickjacking.XFrameOptionsMiddleware)
