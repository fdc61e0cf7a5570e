"""cpctl's streaming job commands, kept apart from cli.py: `jobs ls -w` (WatchJobs),
`jobs logs ID [-f]` (GetJobLogs / FollowJobLogs) and `jobs run --wait`.

`with_streams(verbs)` takes cli.py's jobs verb table and returns it with these added; the
actions print as events arrive (one line each, flushed) and return None.
"""

from __future__ import annotations

import json
import sys

from ._gen.containers.api.v1 import job_pb2

WATCH_COLUMNS = [("EVENT", "type"), ("JOB", "jobId"), ("STATE", "state"), ("EXIT", "exitCode"), ("REASON", "reason")]
ENDED = (job_pb2.JOB_STATE_SUCCEEDED, job_pb2.JOB_STATE_FAILED, job_pb2.JOB_STATE_CANCELLED)


def with_streams(verbs: dict, as_dict) -> dict:
    run_setup, run_action, *rest = verbs["run"]
    ls_setup, ls_action, *_ = verbs["ls"]

    def run_with_wait(parser):
        run_setup(parser)
        parser.add_argument(
            "--wait", action="store_true", help="wait until the job ends (a watch), then exit with its exit code"
        )

    def run_or_wait(client, args):
        job = run_action(client, args)
        return _wait(client, job, args, as_dict) if args.wait else job

    def ls_with_watch(parser):
        ls_setup(parser)
        parser.add_argument("-w", "--watch", action="store_true", help="then print every change as it happens")

    def ls_or_watch(client, args):
        return _watch(client, args, as_dict) if args.watch else ls_action(client, args)

    def logs(parser):
        parser.add_argument("id")
        parser.add_argument("-f", "--follow", action="store_true", help="print the output as it comes, until the end")

    return {
        **verbs,
        "run": (run_with_wait, run_or_wait, *rest),
        "ls": (ls_with_watch, ls_or_watch),
        "logs": (logs, _logs),
    }


def _watch(client, args, as_dict) -> None:
    """The current jobs (ADDED), then each change (MODIFIED), until interrupted."""
    widths = [len(header) for header, _ in WATCH_COLUMNS]
    if not args.json:
        _line([header for header, _ in WATCH_COLUMNS], widths)
    for event in client.jobs.watch():
        data = {**as_dict(event.job), "type": job_pb2.WatchEventType.Name(event.type).removeprefix("WATCH_EVENT_TYPE_")}
        if args.json:
            print(json.dumps({"type": data["type"], "job": as_dict(event.job)}), flush=True)
            continue
        cells = [str(data.get(key, "")) for _, key in WATCH_COLUMNS]
        widths = [max(w, len(c)) for w, c in zip(widths, cells, strict=True)]
        _line(cells, widths)


def _line(cells: list[str], widths: list[int]) -> None:
    print("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip(), flush=True)


def _logs(client, args) -> None:
    if args.follow:
        for piece in client.jobs.follow_logs(args.id):
            sys.stdout.write(piece)
            sys.stdout.flush()
        return
    offset = 0
    while True:  # what there is now, page after page
        page = client.jobs.logs(args.id, offset)
        sys.stdout.write(page.data)
        if page.complete or page.next_offset == offset:
            return
        offset = page.next_offset


def _wait(client, job, args, as_dict):
    """Watches until `job` ends. Succeeded: the job, printed. Otherwise it is printed here and
    cpctl exits with the job's exit code (1 without one)."""
    final = job
    if job.state not in ENDED:
        for event in client.jobs.watch():
            if event.job.job_id == job.job_id and event.job.state in ENDED:
                final = event.job
                break
    if final.state == job_pb2.JOB_STATE_SUCCEEDED:
        return final  # printed as `jobs run` prints a job
    if args.json:
        print(json.dumps(as_dict(final)), flush=True)
    else:
        print(f"{final.job_id} {job_pb2.JobState.Name(final.state)}: {final.reason or 'no reason given'}", flush=True)
    raise SystemExit(final.exit_code if final.HasField("exit_code") and final.exit_code else 1)
