"""The one place credentials are read: attaches request.principal (resolved lazily, once)."""

from django.utils.functional import SimpleLazyObject

from .authenticators import authenticate


class PrincipalMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.principal = SimpleLazyObject(lambda: authenticate(request))
        return self.get_response(request)
