"""uploads.api.v1.BucketUploadsService: a thin view over listing.list_uploads."""

from __future__ import annotations

from controlplane.rpc import Context, Service, rpc
from uploads.api.v1 import uploads_pb2 as pb

from .listing import list_uploads
from .permissions import CanReadUploads


class BucketUploadsService(Service):
    descriptor = pb.DESCRIPTOR.services_by_name["BucketUploadsService"]

    @rpc(request=pb.ListUploadsRequest, response=pb.ListUploadsResponse, permission=CanReadUploads())
    def ListUploads(self, request, context: Context):
        return list_uploads(context.principal, request)
