from containers.api.v1 import job_pb2 as pb
from controlplane.rpc import Service, rpc

from .. import selectors
from ..messages import job_to_proto
from ..models import Job
from ..permissions import operator, viewer
from ..services import jobs
from .paging import list_page


class JobService(Service):
    descriptor = pb.DESCRIPTOR.services_by_name["JobService"]

    @rpc(request=pb.RunJobRequest, response=pb.RunJobResponse, permission=operator())
    def RunJob(self, request, context):
        job = jobs.run_job(
            actor=context.principal,
            namespace=request.namespace,
            image=request.image,
            command=list(request.command),
            env=dict(request.env),
        )
        return pb.RunJobResponse(job=job_to_proto(job, context.principal))

    @rpc(request=pb.GetJobRequest, response=pb.GetJobResponse, permission=viewer(Job))
    def GetJob(self, request, context):
        return pb.GetJobResponse(job=job_to_proto(selectors.get(Job, request.job_id), context.principal))

    @rpc(request=pb.ListJobsRequest, response=pb.ListJobsResponse, permission=viewer())
    def ListJobs(self, request, context):
        page, token = list_page(Job, request)
        return pb.ListJobsResponse(jobs=[job_to_proto(j, context.principal) for j in page], next_page_token=token)

    @rpc(request=pb.CancelJobRequest, response=pb.CancelJobResponse, permission=operator(Job))
    def CancelJob(self, request, context):
        job = jobs.cancel_job(actor=context.principal, job_id=request.job_id)
        return pb.CancelJobResponse(job=job_to_proto(job, context.principal))
