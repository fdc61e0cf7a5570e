from containers.api.v1 import egress_pb2 as pb
from controlplane.rpc import AdminOnly, Service, rpc

from ..messages import event_to_proto, grant_to_proto
from ..models import EgressEvent, EgressGrant, Sandbox
from ..permissions import AgentScoped, operator, viewer
from ..services import egress
from .paging import list_page

# Connections are reported by the sandbox's own agent; admins pass every check (spec §5.7).
_OWN_SANDBOX_AGENT = AgentScoped(Sandbox, "sandbox_id", otherwise=AdminOnly())


class EgressService(Service):
    descriptor = pb.DESCRIPTOR.services_by_name["EgressService"]

    @rpc(request=pb.GrantEgressRequest, response=pb.GrantEgressResponse, permission=operator())
    def GrantEgress(self, request, context):
        grant = egress.grant_egress(
            actor=context.principal, namespace=request.namespace, target=request.target, request_id=request.request_id
        )
        return pb.GrantEgressResponse(grant=grant_to_proto(grant))

    @rpc(request=pb.RevokeEgressRequest, response=pb.RevokeEgressResponse, permission=operator(EgressGrant))
    def RevokeEgress(self, request, context):
        egress.revoke_egress(actor=context.principal, grant_id=request.grant_id)
        return pb.RevokeEgressResponse()

    @rpc(request=pb.ListEgressGrantsRequest, response=pb.ListEgressGrantsResponse, permission=viewer())
    def ListEgressGrants(self, request, context):
        page, token = list_page(EgressGrant, request)
        return pb.ListEgressGrantsResponse(grants=[grant_to_proto(g) for g in page], next_page_token=token)

    @rpc(request=pb.ListEgressEventsRequest, response=pb.ListEgressEventsResponse, permission=viewer())
    def ListEgressEvents(self, request, context):
        page, token = list_page(EgressEvent, request)
        return pb.ListEgressEventsResponse(events=[event_to_proto(e) for e in page], next_page_token=token)

    @rpc(request=pb.ReportEgressEventRequest, response=pb.ReportEgressEventResponse, permission=_OWN_SANDBOX_AGENT)
    def ReportEgressEvent(self, request, context):
        event = egress.report_egress_event(
            actor=context.principal, sandbox_id=request.sandbox_id, target=request.target, allowed=request.allowed
        )
        return pb.ReportEgressEventResponse(event=event_to_proto(event))
