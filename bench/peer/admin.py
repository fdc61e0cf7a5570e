"""The library registers APIKey with the admin; the product's console accepts only its own
principal-checked admins (controlplane.admin_site.check_registry), and the peer needs none."""

from django.contrib import admin
from rest_framework_api_key.models import APIKey

admin.site.unregister(APIKey)
