from containers.api.v1 import egress_pb2 as pb
from containers.api.v1.egress_connect import EgressServiceSync, EgressServiceWSGIApplication
from controlplane.rpc import AdminOnly, Service, principal_of, rpc

from ..converters import event_to_proto, grant_to_proto
from ..models import EgressEvent, EgressGrant, Sandbox
from ..permissions import AgentScoped, operator, viewer
from ..services import egress
from .paging import list_page

# Connections are reported by the sandbox's own agent; admins pass every check.
_OWN_SANDBOX_AGENT = AgentScoped(Sandbox, "sandbox_id", otherwise=AdminOnly())


class EgressService(Service, EgressServiceSync):
    descriptor = pb.DESCRIPTOR.services_by_name["EgressService"]
    application = EgressServiceWSGIApplication

    @rpc(permission=operator())
    def grant_egress(self, request, ctx):
        grant = egress.grant_egress(
            actor=principal_of(ctx), namespace=request.namespace, target=request.target, request_id=request.request_id
        )
        return pb.GrantEgressResponse(grant=grant_to_proto(grant))

    @rpc(permission=operator(EgressGrant))
    def revoke_egress(self, request, ctx):
        egress.revoke_egress(actor=principal_of(ctx), grant_id=request.grant_id)
        return pb.RevokeEgressResponse()

    @rpc(permission=viewer())
    def list_egress_grants(self, request, ctx):
        page, token = list_page(EgressGrant, request)
        return pb.ListEgressGrantsResponse(grants=[grant_to_proto(g) for g in page], next_page_token=token)

    @rpc(permission=viewer())
    def list_egress_events(self, request, ctx):
        page, token = list_page(EgressEvent, request)
        return pb.ListEgressEventsResponse(events=[event_to_proto(e) for e in page], next_page_token=token)

    @rpc(permission=_OWN_SANDBOX_AGENT)
    def report_egress_event(self, request, ctx):
        event = egress.report_egress_event(
            actor=principal_of(ctx), sandbox_id=request.sandbox_id, target=request.target, allowed=request.allowed
        )
        return pb.ReportEgressEventResponse(event=event_to_proto(event))
