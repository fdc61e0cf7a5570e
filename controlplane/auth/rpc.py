"""containers.api.v1.IdentityService: who the caller is, for any authenticated principal."""

from __future__ import annotations

from containers.api.v1 import identity_pb2 as pb
from controlplane.rpc import Authenticated, Service, rpc

from .identity import principal_to_proto


class IdentityService(Service):
    descriptor = pb.DESCRIPTOR.services_by_name["IdentityService"]

    @rpc(request=pb.WhoAmIRequest, response=pb.WhoAmIResponse, permission=Authenticated())
    def WhoAmI(self, request, context):
        return principal_to_proto(context.principal)
