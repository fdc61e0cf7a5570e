from containers.api.v1 import sandbox_pb2 as pb
from containers.api.v1.sandbox_connect import SandboxServiceSync, SandboxServiceWSGIApplication
from controlplane.rpc import Service, principal_of, rpc

from .. import selectors
from ..converters import sandbox_to_proto
from ..models import Sandbox
from ..permissions import operator, viewer
from ..services import sandboxes
from .paging import list_page


class SandboxService(Service, SandboxServiceSync):
    descriptor = pb.DESCRIPTOR.services_by_name["SandboxService"]
    application = SandboxServiceWSGIApplication

    @rpc(permission=operator())
    def create_sandbox(self, request, ctx):
        sandbox = sandboxes.create_sandbox(
            actor=principal_of(ctx),
            namespace=request.namespace,
            image=request.image,
            workspace_id=request.workspace_id,
        )
        return pb.CreateSandboxResponse(sandbox=sandbox_to_proto(sandbox))

    @rpc(permission=viewer(Sandbox))
    def get_sandbox(self, request, ctx):
        return pb.GetSandboxResponse(sandbox=sandbox_to_proto(selectors.get(Sandbox, request.sandbox_id)))

    @rpc(permission=viewer())
    def list_sandboxes(self, request, ctx):
        page, token = list_page(Sandbox, request)
        return pb.ListSandboxesResponse(sandboxes=[sandbox_to_proto(s) for s in page], next_page_token=token)

    @rpc(permission=operator(Sandbox))
    def delete_sandbox(self, request, ctx):
        sandboxes.delete_sandbox(actor=principal_of(ctx), sandbox_id=request.sandbox_id)
        return pb.DeleteSandboxResponse()

    @rpc(permission=viewer(Sandbox))
    def get_preview_url(self, request, ctx):
        url = sandboxes.preview_url(selectors.get(Sandbox, request.sandbox_id))
        return pb.GetPreviewUrlResponse(url=url)

    @rpc(permission=operator(Sandbox))
    def get_app_key(self, request, ctx):
        return pb.GetAppKeyResponse(app_key=selectors.get(Sandbox, request.sandbox_id).app_key)
