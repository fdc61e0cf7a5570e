from containers.api.v1 import job_pb2 as pb
from containers.api.v1.job_connect import JobServiceSync, JobServiceWSGIApplication
from controlplane.rpc import Service, principal_of, rpc
from controlplane.rpc.codecs import prepared, prepared_page
from controlplane.rpc.streams import Stream

from .. import selectors, streams
from ..converters import job_to_json, job_to_proto
from ..models import Job
from ..permissions import operator, viewer
from ..services import jobs
from .paging import list_page


class JobService(Service, JobServiceSync):
    descriptor = pb.DESCRIPTOR.services_by_name["JobService"]
    application = JobServiceWSGIApplication

    @rpc(permission=operator())
    def run_job(self, request, ctx):
        job = jobs.run_job(
            actor=principal_of(ctx),
            namespace=request.namespace,
            image=request.image,
            command=list(request.command),
            env=dict(request.env),
            timeout_seconds=request.timeout_seconds,
            request_id=request.request_id,
        )
        return pb.RunJobResponse(job=job_to_proto(job, principal_of(ctx)))

    @rpc(permission=viewer(Job))
    def get_job(self, request, ctx):
        job, reader = selectors.get(Job, request.job_id), principal_of(ctx)
        return prepared(
            pb.GetJobResponse,
            {"job": job_to_json(job, reader)},
            lambda: pb.GetJobResponse(job=job_to_proto(job, reader)),
        )

    @rpc(permission=viewer())
    def list_jobs(self, request, ctx):
        (page, token), reader = list_page(Job, request), principal_of(ctx)
        return prepared_page(
            pb.ListJobsResponse,
            "jobs",
            page,
            token,
            lambda job: job_to_json(job, reader),
            lambda job: job_to_proto(job, reader),
        )

    @rpc(permission=operator(Job))
    def cancel_job(self, request, ctx):
        job = jobs.cancel_job(actor=principal_of(ctx), job_id=request.job_id)
        return pb.CancelJobResponse(job=job_to_proto(job, principal_of(ctx)))

    @rpc(permission=viewer(Job))
    def get_job_logs(self, request, ctx):
        page = selectors.job_logs(selectors.get(Job, request.job_id), request.offset)
        return pb.GetJobLogsResponse(
            data=page.data.decode("utf-8", errors="replace"),
            next_offset=page.next_offset,
            complete=page.complete,
            first_offset=page.first_offset,
        )

    @rpc(permission=viewer())
    def watch_jobs(self, request, ctx):
        return streams.watch_jobs(
            reader=lambda: principal_of(ctx),  # rechecked while the stream runs
            namespace=request.namespace,
            resume_token=request.resume_token,
            stream=Stream(ctx),
            job_id=request.job_id,
        )

    @rpc(permission=viewer(Job))
    def follow_job_logs(self, request, ctx):
        job = selectors.get(Job, request.job_id)
        return streams.follow_job_logs(job=job, offset=request.offset, stream=Stream(ctx))
