"""cpctl's streaming job commands: `jobs ls -w` (WatchJobs), `jobs logs ID [-f]` (GetJobLogs /
FollowJobLogs) and `jobs run --wait`. They print as events arrive (one line each, flushed),
so they write for themselves rather than through the table renderer.
"""

from __future__ import annotations

import json
import sys

from ._gen.containers.api.v1 import job_pb2
from ._render import as_dict

WATCH_COLUMNS = [("EVENT", "type"), ("JOB", "jobId"), ("STATE", "state"), ("EXIT", "exitCode"), ("REASON", "reason")]
ENDED = (job_pb2.JOB_STATE_SUCCEEDED, job_pb2.JOB_STATE_FAILED, job_pb2.JOB_STATE_CANCELLED)


def watch(client, json_mode: bool) -> None:
    """The current jobs (ADDED), then each change (MODIFIED), until interrupted."""
    widths = [len(header) for header, _ in WATCH_COLUMNS]
    if not json_mode:
        _line([header for header, _ in WATCH_COLUMNS], widths)
    for event in client.jobs.watch():
        kind = job_pb2.WatchEventType.Name(event.type).removeprefix("WATCH_EVENT_TYPE_")
        if json_mode:
            print(json.dumps({"type": kind, "job": as_dict(event.job)}), flush=True)
            continue
        data = {**as_dict(event.job), "type": kind}
        cells = [str(data.get(key, "")) for _, key in WATCH_COLUMNS]
        widths = [max(w, len(c)) for w, c in zip(widths, cells, strict=True)]
        _line(cells, widths)


def _line(cells: list[str], widths: list[int]) -> None:
    print("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip(), flush=True)


def logs(client, job_id: str, follow: bool) -> None:
    if follow:
        for piece in client.jobs.follow_logs(job_id):
            sys.stdout.write(piece)
            sys.stdout.flush()
        return
    offset = 0
    while True:  # what there is now, page after page
        page = client.jobs.logs(job_id, offset)
        sys.stdout.write(page.data)
        if page.complete or page.next_offset == offset:
            return
        offset = page.next_offset


def wait(client, job, json_mode: bool):
    """Watches until `job` ends. Succeeded: the job, to be printed as `jobs run` prints one.
    Otherwise it is printed here and cpctl exits with the job's exit code (1 without one)."""
    final = job
    if job.state not in ENDED:
        # Its own events only: a namespace's whole watch would first list every job in it.
        # (Checked here too: a server older than the filter sends the namespace's.)
        for event in client.jobs.watch(job_id=job.job_id):
            if event.job.job_id == job.job_id and event.job.state in ENDED:
                final = event.job
                break
    if final.state == job_pb2.JOB_STATE_SUCCEEDED:
        return final
    if json_mode:
        print(json.dumps(as_dict(final)), flush=True)
    else:
        print(f"{final.job_id} {job_pb2.JobState.Name(final.state)}: {final.reason or 'no reason given'}", flush=True)
    raise SystemExit(final.exit_code if final.HasField("exit_code") and final.exit_code else 1)
