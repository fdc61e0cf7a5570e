"""containers.api.v1.IdentityService: who the caller is, for any authenticated principal."""

from __future__ import annotations

from containers.api.v1 import identity_pb2 as pb
from containers.api.v1.identity_connect import IdentityServiceSync, IdentityServiceWSGIApplication
from controlplane.rpc import Authenticated, Service, principal_of, rpc

from .identity import principal_to_proto


class IdentityService(Service, IdentityServiceSync):
    descriptor = pb.DESCRIPTOR.services_by_name["IdentityService"]
    application = IdentityServiceWSGIApplication

    @rpc(permission=Authenticated())
    def who_am_i(self, request, ctx):
        return principal_to_proto(principal_of(ctx))
