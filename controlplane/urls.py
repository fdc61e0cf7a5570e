from django.contrib import admin
from django.urls import path, re_path

from controlplane import site
from controlplane.auth import views as auth_views
from controlplane.health import healthz, readyz
from controlplane.observability.exposition import metrics_view
from controlplane.routes import RPC_ROUTE
from controlplane.rpc.views import dispatch

urlpatterns = [
    path("", site.landing, name="landing"),
    path("api/", site.api_description, name="api_description"),
    path("api/proto/<path:name>", site.proto_source, name="proto_source"),
    path("admin/", admin.site.urls),
    path("healthz", healthz),
    path("readyz", readyz),
    path("metrics", metrics_view),
    # Browser sign-in (the OIDC authorization-code flow), hosted by the API.
    path("auth/login", auth_views.LoginView.as_view(), name="oidc_login"),
    path("auth/callback", auth_views.CallbackView.as_view(), name="oidc_callback"),
    path("auth/me", auth_views.me, name="auth_me"),
    path("auth/logout", auth_views.logout, name="auth_logout"),
    # Connect, gRPC-Web and gRPC: POST /<package>.<Service>/<Method>.
    re_path(rf"^{RPC_ROUTE}$", dispatch),
]
