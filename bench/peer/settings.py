"""The product's settings plus the DRF peer, mounted under /peer/ (bench only)."""

from controlplane.settings import *  # noqa: F403
from controlplane.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "rest_framework", "rest_framework_api_key", "bench.peer"]
ROOT_URLCONF = "bench.peer.root_urls"

REST_FRAMEWORK = {
    # djangorestframework-api-key is a permission, not an authentication class (its docs):
    # API clients carry no session or password, so DRF's session/basic authenticators go.
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": ["bench.peer.permissions.HasNamespaceAPIKey"],
    # A JSON API: no browsable HTML renderer in production.
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
}
