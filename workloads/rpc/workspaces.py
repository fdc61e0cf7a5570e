from containers.api.v1 import workspace_pb2 as pb
from containers.api.v1.workspace_connect import WorkspaceServiceSync, WorkspaceServiceWSGIApplication
from controlplane.rpc import Service, principal_of, rpc

from .. import selectors
from ..converters import workspace_to_proto
from ..models import Workspace
from ..permissions import AgentScoped, operator, viewer
from ..services import workspaces
from .paging import list_page

# The one call a workspace-scoped sandbox agent key may make: read its workspace.
# Managing workspaces stays with operators, so Create/List/Delete refuse every agent.
_READ_OWN_WORKSPACE = AgentScoped(Workspace, "workspace_scope", otherwise=viewer(Workspace))


class WorkspaceService(Service, WorkspaceServiceSync):
    descriptor = pb.DESCRIPTOR.services_by_name["WorkspaceService"]
    application = WorkspaceServiceWSGIApplication

    @rpc(permission=operator())
    def create_workspace(self, request, ctx):
        workspace = workspaces.create_workspace(
            actor=principal_of(ctx), namespace=request.namespace, name=request.name, request_id=request.request_id
        )
        return pb.CreateWorkspaceResponse(workspace=workspace_to_proto(workspace))

    @rpc(permission=_READ_OWN_WORKSPACE)
    def get_workspace(self, request, ctx):
        return pb.GetWorkspaceResponse(workspace=workspace_to_proto(selectors.get(Workspace, request.workspace_id)))

    @rpc(permission=viewer())
    def list_workspaces(self, request, ctx):
        page, token = list_page(Workspace, request)
        return pb.ListWorkspacesResponse(workspaces=[workspace_to_proto(w) for w in page], next_page_token=token)

    @rpc(permission=operator(Workspace))
    def delete_workspace(self, request, ctx):
        workspaces.delete_workspace(actor=principal_of(ctx), workspace_id=request.workspace_id)
        return pb.DeleteWorkspaceResponse()
