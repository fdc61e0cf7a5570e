"""containers.api.v1.IdentityService: who the caller is, for any authenticated principal.

Served by the runtime itself, as reflection is: it reads only the principal the middleware
resolved (serialized by controlplane.auth.identity, shared with GET /auth/me).
"""

from __future__ import annotations

from containers.api.v1 import identity_pb2 as pb
from containers.api.v1.identity_connect import IdentityServiceSync, IdentityServiceWSGIApplication
from controlplane.auth.identity import principal_to_proto

from .context import principal_of
from .permissions import Authenticated
from .service import Service, rpc


class IdentityService(Service, IdentityServiceSync):
    descriptor = pb.DESCRIPTOR.services_by_name["IdentityService"]
    application = IdentityServiceWSGIApplication

    @rpc(permission=Authenticated())
    def who_am_i(self, request, ctx):
        return principal_to_proto(principal_of(ctx))
