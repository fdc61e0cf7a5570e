"""containers.runtime.v1.RunnerService (runner keys only) and
containers.api.v1.RunnerAdminService (admins only)."""

from __future__ import annotations

from google.protobuf.duration_pb2 import Duration

from containers.api.v1 import runner_admin_pb2 as admin_pb
from containers.api.v1.runner_admin_connect import RunnerAdminServiceSync, RunnerAdminServiceWSGIApplication
from containers.runtime.v1 import runner_pb2 as pb
from containers.runtime.v1.runner_connect import RunnerServiceSync, RunnerServiceWSGIApplication
from controlplane.faults.arrival import current_deadline
from controlplane.rpc import AdminOnly, RunnerOnly, Service, pagination, principal_of, rpc
from namespaces.converters import timestamp
from workloads.services import leases

from . import selectors, services
from .converters import runner_to_proto
from .metrics import counts_heartbeats

RUNNER = RunnerOnly()


class RunnerService(Service, RunnerServiceSync):
    """Each handler opens its own short transactions: AcquireWork's long poll must hold none
    (nor a connection) while it waits, and Heartbeat is a single statement."""

    descriptor = pb.DESCRIPTOR.services_by_name["RunnerService"]
    application = RunnerServiceWSGIApplication

    @rpc(permission=RUNNER, own_transactions=True)
    def acquire_work(self, request, ctx):
        work, retry_after = leases.acquire_work(
            principal=principal_of(ctx),
            kinds=list(request.kinds),
            wait_seconds=request.wait_seconds,
            version=request.runner_version,
            deadline=current_deadline.get(),  # computed where the request entered
        )
        if work is not None:
            return pb.AcquireWorkResponse(work=work)
        return pb.AcquireWorkResponse(retry_after=Duration(seconds=int(retry_after)))

    @rpc(permission=RUNNER, own_transactions=True)
    @counts_heartbeats
    def heartbeat(self, request, ctx):
        expires, cancel = leases.heartbeat(
            principal=principal_of(ctx),
            work_id=request.work_id,
            lease_token=request.lease_token,
            running=request.running,
        )
        return pb.HeartbeatResponse(
            lease_expire_time=timestamp(expires), cancel_requested=cancel, grace_seconds=leases.grace_seconds()
        )

    @rpc(permission=RUNNER, own_transactions=True)
    def append_logs(self, request, ctx):
        next_offset = leases.append_logs(
            work_id=request.work_id, lease_token=request.lease_token, offset=request.offset, data=request.data
        )
        return pb.AppendLogsResponse(next_offset=next_offset)

    @rpc(permission=RUNNER, own_transactions=True)
    def finish_work(self, request, ctx):
        leases.note_seen(principal_of(ctx))
        leases.finish_work(
            principal=principal_of(ctx),
            work_id=request.work_id,
            lease_token=request.lease_token,
            result=request.result,
            exit_code=request.exit_code,
            signal_number=request.signal,
            reason=request.reason,
            image_digest=request.image_digest,
        )
        return pb.FinishWorkResponse()


ADMIN = AdminOnly()


class RunnerAdminService(Service, RunnerAdminServiceSync):
    descriptor = admin_pb.DESCRIPTOR.services_by_name["RunnerAdminService"]
    application = RunnerAdminServiceWSGIApplication

    @rpc(permission=ADMIN)
    def issue_runner_key(self, request, ctx):
        runner, plaintext = services.issue_runner(
            actor=principal_of(ctx), name=request.name, namespaces=list(request.namespaces)
        )
        return admin_pb.IssueRunnerKeyResponse(runner=runner_to_proto(runner), plaintext=plaintext)

    @rpc(permission=ADMIN)
    def list_runners(self, request, ctx):
        page, token = pagination.keyset_page(
            request,
            salt="runners.list",
            fetch=lambda after, limit: selectors.page(after=after, limit=limit),
            position_of=selectors.position_of,
        )
        return admin_pb.ListRunnersResponse(runners=[runner_to_proto(r) for r in page], next_page_token=token)

    @rpc(permission=ADMIN)
    def revoke_runner(self, request, ctx):
        services.revoke_runner(actor=principal_of(ctx), runner_id=request.runner_id)
        return admin_pb.RevokeRunnerResponse(runner=runner_to_proto(selectors.get(request.runner_id)))
