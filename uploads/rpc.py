"""uploads.api.v1.BucketUploadsService: a thin view over read.listing, and the only module of
the app that knows the wire codecs (the page is handed over as its proto3 JSON object)."""

from __future__ import annotations

from controlplane.rpc import Service, principal_of, rpc
from controlplane.rpc.codecs import prepared
from uploads.api.v1 import uploads_pb2 as pb
from uploads.api.v1.uploads_connect import BucketUploadsServiceSync, BucketUploadsServiceWSGIApplication

from .permissions import CanReadUploads
from .read.listing import uploads_page


class BucketUploadsService(Service, BucketUploadsServiceSync):
    descriptor = pb.DESCRIPTOR.services_by_name["BucketUploadsService"]
    application = BucketUploadsServiceWSGIApplication

    @rpc(permission=CanReadUploads())
    def list_uploads(self, request, ctx):
        return prepared(pb.ListUploadsResponse, uploads_page(principal_of(ctx), request))
