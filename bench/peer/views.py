"""Thin generic views: GetNamespace and the first page of ListUploads, DRF style."""

from django.shortcuts import get_object_or_404
from rest_framework.generics import ListAPIView, RetrieveAPIView

from namespaces.models import Namespace
from uploads.models import Bucket, Integration

from .pagination import NewestFirst
from .permissions import namespace_of
from .serializers import NamespaceSerializer, UploadSerializer


class NamespaceDetail(RetrieveAPIView):
    serializer_class = NamespaceSerializer
    lookup_field = "name"

    def get_queryset(self):
        return Namespace.objects.filter(name=namespace_of(self.request)).prefetch_related(
            "group_bindings", "internal_targets", "image_pull_secrets"
        )


class UploadList(ListAPIView):
    serializer_class = UploadSerializer
    pagination_class = NewestFirst

    def get_queryset(self):
        self.bucket = get_object_or_404(Bucket, pk=self.kwargs["bucket_id"], namespace__name=namespace_of(self.request))
        return self.bucket.uploads.prefetch_related("aliases", "meta_uploads")

    def paginate_queryset(self, queryset):
        page = super().paginate_queryset(queryset)
        # The page's integrations in one query (no relation to prefetch; see UploadSerializer).
        wanted = {upload.integration_id for upload in page if upload.integration_id}
        rows = Integration.objects.filter(namespace_id=self.bucket.namespace_id, integration_id__in=wanted)
        self.integrations = {row.integration_id: row for row in rows} if wanted else {}
        return page

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "integrations": getattr(self, "integrations", {})}
