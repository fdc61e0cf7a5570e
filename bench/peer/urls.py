from django.urls import path

from . import views

urlpatterns = [
    path("namespaces/<str:name>/", views.NamespaceDetail.as_view(), name="peer-namespace"),
    path("buckets/<uuid:bucket_id>/uploads/", views.UploadList.as_view(), name="peer-uploads"),
]
