from containers.api.v1 import environment_pb2 as pb
from controlplane.rpc import Service, rpc

from .. import selectors
from ..messages import environment_to_proto
from ..models import Environment
from ..permissions import operator, viewer
from ..services import environments
from .paging import list_page


class EnvironmentService(Service):
    descriptor = pb.DESCRIPTOR.services_by_name["EnvironmentService"]

    @rpc(request=pb.RegisterEnvironmentRequest, response=pb.RegisterEnvironmentResponse, permission=operator())
    def RegisterEnvironment(self, request, context):
        environment = environments.register_environment(
            actor=context.principal,
            namespace=request.namespace,
            name=request.name,
            image=request.image,
            request_id=request.request_id,
        )
        return pb.RegisterEnvironmentResponse(environment=environment_to_proto(environment))

    @rpc(request=pb.GetEnvironmentRequest, response=pb.GetEnvironmentResponse, permission=viewer(Environment))
    def GetEnvironment(self, request, context):
        environment = selectors.get(Environment, request.environment_id)
        return pb.GetEnvironmentResponse(environment=environment_to_proto(environment))

    @rpc(request=pb.ListEnvironmentsRequest, response=pb.ListEnvironmentsResponse, permission=viewer())
    def ListEnvironments(self, request, context):
        page, token = list_page(Environment, request)
        return pb.ListEnvironmentsResponse(environments=[environment_to_proto(e) for e in page], next_page_token=token)

    @rpc(request=pb.BuildEnvironmentRequest, response=pb.BuildEnvironmentResponse, permission=operator(Environment))
    def BuildEnvironment(self, request, context):
        environment = environments.build_environment(actor=context.principal, environment_id=request.environment_id)
        return pb.BuildEnvironmentResponse(environment=environment_to_proto(environment))
