from containers.api.v1 import workspace_pb2 as pb
from controlplane.rpc import Service, rpc

from .. import selectors
from ..messages import workspace_to_proto
from ..models import Workspace
from ..permissions import AgentScoped, operator, viewer
from ..services import workspaces
from .paging import list_page

# The one call a workspace-scoped sandbox agent key may make (spec §5.8): read its workspace.
# Managing workspaces stays with operators, so Create/List/Delete refuse every agent.
_READ_OWN_WORKSPACE = AgentScoped(Workspace, "workspace_scope", otherwise=viewer(Workspace))


class WorkspaceService(Service):
    descriptor = pb.DESCRIPTOR.services_by_name["WorkspaceService"]

    @rpc(request=pb.CreateWorkspaceRequest, response=pb.CreateWorkspaceResponse, permission=operator())
    def CreateWorkspace(self, request, context):
        workspace = workspaces.create_workspace(
            actor=context.principal, namespace=request.namespace, name=request.name, request_id=request.request_id
        )
        return pb.CreateWorkspaceResponse(workspace=workspace_to_proto(workspace))

    @rpc(request=pb.GetWorkspaceRequest, response=pb.GetWorkspaceResponse, permission=_READ_OWN_WORKSPACE)
    def GetWorkspace(self, request, context):
        return pb.GetWorkspaceResponse(workspace=workspace_to_proto(selectors.get(Workspace, request.workspace_id)))

    @rpc(request=pb.ListWorkspacesRequest, response=pb.ListWorkspacesResponse, permission=viewer())
    def ListWorkspaces(self, request, context):
        page, token = list_page(Workspace, request)
        return pb.ListWorkspacesResponse(workspaces=[workspace_to_proto(w) for w in page], next_page_token=token)

    @rpc(request=pb.DeleteWorkspaceRequest, response=pb.DeleteWorkspaceResponse, permission=operator(Workspace))
    def DeleteWorkspace(self, request, context):
        workspaces.delete_workspace(actor=context.principal, workspace_id=request.workspace_id)
        return pb.DeleteWorkspaceResponse()
