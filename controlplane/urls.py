from django.contrib import admin
from django.urls import path, re_path

from controlplane.health import healthz
from controlplane.rpc.views import dispatch

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz),
    # Connect: POST /<package>.<Service>/<Method>; the service name always has a dot.
    re_path(r"^(?P<service>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)/(?P<method>[A-Za-z_]\w*)$", dispatch),
]
