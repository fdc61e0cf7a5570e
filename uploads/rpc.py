"""uploads.api.v1.BucketUploadsService: a thin view over listing.list_uploads."""

from __future__ import annotations

from controlplane.rpc import Service, principal_of, rpc
from uploads.api.v1 import uploads_pb2 as pb
from uploads.api.v1.uploads_connect import BucketUploadsServiceSync, BucketUploadsServiceWSGIApplication

from .listing import list_uploads
from .permissions import CanReadUploads


class BucketUploadsService(Service, BucketUploadsServiceSync):
    descriptor = pb.DESCRIPTOR.services_by_name["BucketUploadsService"]
    application = BucketUploadsServiceWSGIApplication

    @rpc(permission=CanReadUploads())
    def list_uploads(self, request, ctx):
        return list_uploads(principal_of(ctx), request)
