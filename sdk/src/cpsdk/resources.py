"""The namespace-scoped surface: jobs, sandboxes, environments, workspaces, egress, uploads.

Each method builds a request and hands it to the transport, which fills in the client's
namespace, so callers never pass it. With the async client every method returns an
awaitable and `list()` an async iterator; otherwise they are the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from ._gen.containers.api.v1 import egress_pb2, environment_pb2, job_pb2, sandbox_pb2, workspace_pb2
from ._gen.uploads.api.v1 import uploads_pb2
from ._transport import Resume


class _Resource:
    service = None  # ServiceDescriptor

    def __init__(self, transport):
        self._transport = transport

    def _call(self, method: str, request, unwrap=None):
        return self._transport.call(self.service, method, request, unwrap)

    def _pages(self, method: str, request, items: str, **fields):
        return self._transport.pages(self.service, method, request, items, **fields)

    def _stream(self, method: str, request, resume: Resume):
        return self._transport.stream(self.service, method, request, resume)


class Jobs(_Resource):
    service = job_pb2.DESCRIPTOR.services_by_name["JobService"]

    def run(self, image: str, command: Iterable[str] = (), env: Mapping[str, str] | None = None):
        """Runs `command` (a list of arguments, as for exec) in `image`; returns the Job
        (QUEUED until a runtime picks it up). A string is refused: pass ["sh", "-c", "..."]
        for a shell line, or shlex.split() it."""
        if isinstance(command, (str, bytes)):
            raise TypeError('command must be a list of arguments, e.g. ["echo", "hi"], not a string')
        return self._call("RunJob", job_pb2.RunJobRequest(image=image, command=list(command), env=env or {}), "job")

    def get(self, job_id: str):
        return self._call("GetJob", job_pb2.GetJobRequest(job_id=job_id), "job")

    def list(self, page_size: int = 0):
        """Every job of the namespace, newest first, following page tokens."""
        return self._pages("ListJobs", job_pb2.ListJobsRequest(page_size=page_size), "jobs")

    def cancel(self, job_id: str):
        return self._call("CancelJob", job_pb2.CancelJobRequest(job_id=job_id), "job")

    def logs(self, job_id: str, offset: int = 0):
        """Up to 1 MiB of the job's output from `offset` (GetJobLogsResponse: data, next_offset,
        complete once the job has ended and all was read)."""
        return self._call("GetJobLogs", job_pb2.GetJobLogsRequest(job_id=job_id, offset=offset))

    def watch(self, resume_token: str = "", *, bookmarks: bool = False, job_id: str = ""):
        """Every change of the namespace's jobs, as it happens (`kubectl get -w`): an iterator
        (async iterator on AsyncClient) of WatchJobsResponse, which never ends by itself.
        `job_id`: only that job's (`kubectl get -w NAME`).

        Without `resume_token` it starts with one ADDED event per job (or for that one job).
        It resumes by itself, from the last event's token, when the server ends the stream
        (STREAM_MAX_SECONDS) or it fails `unavailable`. A token too old for the server's change
        log raises `cpsdk.errors.OutOfRange`: watch again without one. `bookmarks`: also yield
        the BOOKMARK events (a job-less position to resume from, sent while nothing changes)."""
        return self._stream(
            "WatchJobs",
            job_pb2.WatchJobsRequest(resume_token=resume_token, job_id=job_id),
            Resume(
                advance=_past_event,
                keep=lambda event: bookmarks or event.type != job_pb2.WATCH_EVENT_TYPE_BOOKMARK,
            ),
        )

    def follow_logs(self, job_id: str, offset: int = 0):
        """The job's output as it is written (`kubectl logs -f`): an iterator (async on
        AsyncClient) of text pieces, which ends once the job has ended and all was read.
        Resumes by itself, from the last offset, after `unavailable` or the server's end."""
        return self._stream(
            "FollowJobLogs",
            job_pb2.FollowJobLogsRequest(job_id=job_id, offset=offset),
            Resume(
                advance=_past_output,
                finished=lambda piece: piece.complete,
                keep=lambda piece: bool(piece.data),
                unwrap="data",
            ),
        )


def _past_event(request, event) -> None:
    if event.resume_token:  # the initial ADDED events carry none: resuming before the bookmark relists
        request.resume_token = event.resume_token


def _past_output(request, piece) -> None:
    request.offset = piece.next_offset


class Sandboxes(_Resource):
    service = sandbox_pb2.DESCRIPTOR.services_by_name["SandboxService"]

    def create(self, image: str, workspace_id: str = ""):
        request = sandbox_pb2.CreateSandboxRequest(image=image, workspace_id=workspace_id)
        return self._call("CreateSandbox", request, "sandbox")

    def get(self, sandbox_id: str):
        return self._call("GetSandbox", sandbox_pb2.GetSandboxRequest(sandbox_id=sandbox_id), "sandbox")

    def list(self, page_size: int = 0):
        return self._pages("ListSandboxes", sandbox_pb2.ListSandboxesRequest(page_size=page_size), "sandboxes")

    def delete(self, sandbox_id: str):
        return self._call("DeleteSandbox", sandbox_pb2.DeleteSandboxRequest(sandbox_id=sandbox_id))

    def preview_url(self, sandbox_id: str):
        return self._call("GetPreviewUrl", sandbox_pb2.GetPreviewUrlRequest(sandbox_id=sandbox_id), "url")

    def app_key(self, sandbox_id: str):
        return self._call("GetAppKey", sandbox_pb2.GetAppKeyRequest(sandbox_id=sandbox_id), "app_key")


class Environments(_Resource):
    service = environment_pb2.DESCRIPTOR.services_by_name["EnvironmentService"]

    def register(self, name: str, image: str):
        request = environment_pb2.RegisterEnvironmentRequest(name=name, image=image)
        return self._call("RegisterEnvironment", request, "environment")

    def get(self, environment_id: str):
        request = environment_pb2.GetEnvironmentRequest(environment_id=environment_id)
        return self._call("GetEnvironment", request, "environment")

    def list(self, page_size: int = 0):
        request = environment_pb2.ListEnvironmentsRequest(page_size=page_size)
        return self._pages("ListEnvironments", request, "environments")

    def build(self, environment_id: str):
        request = environment_pb2.BuildEnvironmentRequest(environment_id=environment_id)
        return self._call("BuildEnvironment", request, "environment")


class Workspaces(_Resource):
    service = workspace_pb2.DESCRIPTOR.services_by_name["WorkspaceService"]

    def create(self, name: str):
        return self._call("CreateWorkspace", workspace_pb2.CreateWorkspaceRequest(name=name), "workspace")

    def get(self, workspace_id: str):
        return self._call("GetWorkspace", workspace_pb2.GetWorkspaceRequest(workspace_id=workspace_id), "workspace")

    def list(self, page_size: int = 0):
        return self._pages("ListWorkspaces", workspace_pb2.ListWorkspacesRequest(page_size=page_size), "workspaces")

    def delete(self, workspace_id: str):
        return self._call("DeleteWorkspace", workspace_pb2.DeleteWorkspaceRequest(workspace_id=workspace_id))


class Egress(_Resource):
    service = egress_pb2.DESCRIPTOR.services_by_name["EgressService"]

    def grant(self, target: str):
        """Allows egress to `target`: host[:port], or the bare name of a registered internal target."""
        return self._call("GrantEgress", egress_pb2.GrantEgressRequest(target=target), "grant")

    def revoke(self, grant_id: str):
        return self._call("RevokeEgress", egress_pb2.RevokeEgressRequest(grant_id=grant_id))

    def list(self, page_size: int = 0):
        """The namespace's egress grants."""
        return self._pages("ListEgressGrants", egress_pb2.ListEgressGrantsRequest(page_size=page_size), "grants")

    def events(self, page_size: int = 0):
        """Grants given and revoked, and connections reported by sandbox agents."""
        return self._pages("ListEgressEvents", egress_pb2.ListEgressEventsRequest(page_size=page_size), "events")


class Uploads(_Resource):
    service = uploads_pb2.DESCRIPTOR.services_by_name["BucketUploadsService"]

    def list(
        self,
        bucket: str | None = None,
        *,
        bucket_id: str = "",
        path: str = "",
        tags: Iterable[str] = (),
        slug: str = "",
        metadata: Mapping[str, str | bool] | None = None,
        sort: str = "",
        order: str = "",
        date_from: datetime | None = None,
        date_to: datetime | None = None,
        page_size: int = 0,
    ):
        """Every matching upload, following `nextCursor`.

        `bucket` is "NAME" (in the client's namespace) or "NAMESPACE/NAME"; or pass `bucket_id`.
        `metadata` values are strings or booleans (AND-ed); `sort` is created_at (default),
        updated_at, slug, size_bytes or order; `order` is "asc" or "desc" (default).
        """
        request = uploads_pb2.ListUploadsRequest(
            path=path, tags=list(tags), slug=slug, sort_by=sort, sort_order=order, page_size=page_size
        )
        if bucket_id:
            request.bucket.bucket_id = bucket_id
        elif bucket:
            namespace, _, name = bucket.rpartition("/")
            request.bucket.namespace, request.bucket.name = namespace, name
        for key, value in (metadata or {}).items():
            kind = "bool_value" if isinstance(value, bool) else "string_value"
            request.metadata_filters.add(key=key, **{kind: value})
        if date_from is not None:
            request.date_from.FromDatetime(date_from)
        if date_to is not None:
            request.date_to.FromDatetime(date_to)
        return self._pages("ListUploads", request, "uploads", page_field="cursor", next_field="next_cursor")
