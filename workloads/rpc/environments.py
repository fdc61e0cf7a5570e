from containers.api.v1 import environment_pb2 as pb
from containers.api.v1.environment_connect import EnvironmentServiceSync, EnvironmentServiceWSGIApplication
from controlplane.rpc import Service, principal_of, rpc

from .. import selectors
from ..converters import environment_to_proto
from ..models import Environment
from ..permissions import operator, viewer
from ..services import environments
from .paging import list_page


class EnvironmentService(Service, EnvironmentServiceSync):
    descriptor = pb.DESCRIPTOR.services_by_name["EnvironmentService"]
    application = EnvironmentServiceWSGIApplication

    @rpc(permission=operator())
    def register_environment(self, request, ctx):
        environment = environments.register_environment(
            actor=principal_of(ctx), namespace=request.namespace, name=request.name, image=request.image
        )
        return pb.RegisterEnvironmentResponse(environment=environment_to_proto(environment))

    @rpc(permission=viewer(Environment))
    def get_environment(self, request, ctx):
        environment = selectors.get(Environment, request.environment_id)
        return pb.GetEnvironmentResponse(environment=environment_to_proto(environment))

    @rpc(permission=viewer())
    def list_environments(self, request, ctx):
        page, token = list_page(Environment, request)
        return pb.ListEnvironmentsResponse(environments=[environment_to_proto(e) for e in page], next_page_token=token)

    @rpc(permission=operator(Environment))
    def build_environment(self, request, ctx):
        environment = environments.build_environment(actor=principal_of(ctx), environment_id=request.environment_id)
        return pb.BuildEnvironmentResponse(environment=environment_to_proto(environment))
