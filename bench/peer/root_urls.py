"""The product's URLs, plus the peer's under /peer/."""

from django.urls import include, path

from controlplane.urls import urlpatterns as product_urlpatterns

urlpatterns = [path("peer/", include("bench.peer.urls")), *product_urlpatterns]
