"""HasAPIKey, scoped to a namespace.

The library's keys carry no scope or role: here a key's name is the namespace it may read
(one key per namespace; no VIEWER/ADMIN distinction). Its docs fetch the key a second time in
the view (`APIKey.objects.get_from_key`); this keeps the one the permission looked up.
"""

from rest_framework_api_key.models import APIKey
from rest_framework_api_key.permissions import BaseHasAPIKey


class HasNamespaceAPIKey(BaseHasAPIKey):
    model = APIKey

    def has_permission(self, request, view) -> bool:
        key = self.get_key(request)
        if not key:
            return False
        try:
            api_key = self.model.objects.get_from_key(key)
        except self.model.DoesNotExist:
            return False
        if api_key.has_expired:
            return False
        request.api_key = api_key
        return True


def namespace_of(request) -> str:
    return request.api_key.name
