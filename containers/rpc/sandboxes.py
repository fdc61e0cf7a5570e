from containers.api.v1 import sandbox_pb2 as pb
from controlplane.rpc import Service, rpc

from .. import selectors
from ..messages import sandbox_to_proto
from ..models import Sandbox
from ..permissions import operator, viewer
from ..services import sandboxes
from .paging import list_page


class SandboxService(Service):
    descriptor = pb.DESCRIPTOR.services_by_name["SandboxService"]

    @rpc(request=pb.CreateSandboxRequest, response=pb.CreateSandboxResponse, permission=operator())
    def CreateSandbox(self, request, context):
        sandbox = sandboxes.create_sandbox(
            actor=context.principal,
            namespace=request.namespace,
            image=request.image,
            workspace_id=request.workspace_id,
            request_id=request.request_id,
        )
        return pb.CreateSandboxResponse(sandbox=sandbox_to_proto(sandbox))

    @rpc(request=pb.GetSandboxRequest, response=pb.GetSandboxResponse, permission=viewer(Sandbox))
    def GetSandbox(self, request, context):
        return pb.GetSandboxResponse(sandbox=sandbox_to_proto(selectors.get(Sandbox, request.sandbox_id)))

    @rpc(request=pb.ListSandboxesRequest, response=pb.ListSandboxesResponse, permission=viewer())
    def ListSandboxes(self, request, context):
        page, token = list_page(Sandbox, request)
        return pb.ListSandboxesResponse(sandboxes=[sandbox_to_proto(s) for s in page], next_page_token=token)

    @rpc(request=pb.DeleteSandboxRequest, response=pb.DeleteSandboxResponse, permission=operator(Sandbox))
    def DeleteSandbox(self, request, context):
        sandboxes.delete_sandbox(actor=context.principal, sandbox_id=request.sandbox_id)
        return pb.DeleteSandboxResponse()

    @rpc(request=pb.GetPreviewUrlRequest, response=pb.GetPreviewUrlResponse, permission=viewer(Sandbox))
    def GetPreviewUrl(self, request, context):
        url = sandboxes.preview_url(selectors.get(Sandbox, request.sandbox_id))
        return pb.GetPreviewUrlResponse(url=url)

    @rpc(request=pb.GetAppKeyRequest, response=pb.GetAppKeyResponse, permission=operator(Sandbox))
    def GetAppKey(self, request, context):
        return pb.GetAppKeyResponse(app_key=selectors.get(Sandbox, request.sandbox_id).app_key)
