"""The podman side of bench/runner_bench.py: jobs through real runners against podman's own floor.

- Dispatch: RunJob → SUCCEEDED (seen by GetJob, polled every 10 ms) for `true`, one job at a
  time, beside `podman run --rm IMAGE true` measured alternately in the same run (the floor).
- Throughput: N `true` jobs through 2 runners (`--concurrency C` each), from the first RunJob to
  the last SUCCEEDED, beside N `podman run --rm` with 2×C at once.

The control plane is a gunicorn with gthread workers (as docs/runners.md recommends for runner
traffic) on the benchmark's database; podman's API runs on a private socket with the runner's
containers.conf, and the image is scripts/test-image's.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

DISPATCH_GOAL = 1.3  # × the floor, p50
THROUGHPUT_GOAL = 0.8  # × podman's own rate
JOB = "/containers.api.v1.JobService/"


def call(url: str, method: str, key: str, body: dict) -> dict:
    request = urllib.request.Request(
        url + JOB + method,
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def podman_run(image: str) -> float:
    """One `podman run --rm IMAGE true`, as a person would type it: its seconds."""
    from cprunner.cli import containers_conf

    started = time.perf_counter()
    subprocess.run(
        ["podman", "run", "--rm", image, "true"],
        env={**os.environ, "CONTAINERS_CONF": containers_conf()},
        check=True,
        capture_output=True,
        timeout=120,
    )
    return time.perf_counter() - started


class Runners:
    """`cprunner --engine podman` processes as an operator starts them (key in the environment)."""

    def __init__(self, url: str, key: str, socket: str, concurrency: int, count: int, log_dir: Path):
        self.names = [f"bench-{uuid.uuid4().hex[:8]}" for _ in range(count)]
        self.socket = socket
        self.processes = []
        for name in self.names:
            command = [sys.executable, "-m", "cprunner", "--engine", "podman", "--podman-socket", socket]
            command += ["--name", name, "--concurrency", str(concurrency), "--log-level", "WARNING"]
            with (log_dir / f"{name}.log").open("wb") as log:
                env = {**os.environ, "CP_URL": url, "CP_RUNNER_KEY": key}
                self.processes.append(subprocess.Popen(command, env=env, stdout=log, stderr=log))

    def stop(self) -> None:
        from cprunner.engines.podman import PodmanEngine
        from cprunner.runner import LABEL_RUNNER

        from tests.support.live import stop_process

        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            stop_process(process, timeout=30)
        engine = PodmanEngine(self.socket)
        for name in self.names:  # nothing of ours may outlive the run
            for container in engine.list({LABEL_RUNNER: name}):
                engine.remove(container.id)


def wait_succeeded(url: str, key: str, job_id: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while True:
        job = call(url, "GetJob", key, {"jobId": job_id})["job"]
        if job["state"] == "JOB_STATE_SUCCEEDED":
            return
        if job["state"] not in ("JOB_STATE_QUEUED", "JOB_STATE_RUNNING") or time.monotonic() > deadline:
            raise SystemExit(f"dispatch: job {job_id} ended {job['state']}: {job.get('reason', '')}")
        time.sleep(0.01)


STAGES = ("RunJob→leased", "leased→finished", "finished→seen by GetJob")


def _stages(job, called: float, seen: float) -> tuple[float, float, float]:
    """Seconds between the job's server-side timestamps, and the client's own before and after
    (one machine, one clock): how long it waited for a runner, ran, and took to be seen."""
    leased, finished = job.started_at.timestamp(), job.finished_at.timestamp()
    return leased - called, finished - leased, seen - finished


def measure_podman(report, samples: int, jobs: int, concurrency: int) -> tuple[float, float]:
    """Adds the dispatch and throughput rows to `report`; returns (dispatch p50 ratio, throughput ratio)."""
    from django.db import connection

    from apikeys.services import issue_api_key
    from bench.harness import percentile
    from controlplane.auth import Principal, Role
    from namespaces.services import create_namespace
    from runners.services import issue_runner
    from tests.runner.support import IMAGE, PodmanService
    from tests.support.live import ServiceProcess, test_database_url
    from workloads.models import Job

    system = Principal.system("runner_bench")
    create_namespace(actor=system, name="bench-podman")
    _, key = issue_api_key(actor=system, namespace="bench-podman", name="operator", role=Role.OPERATOR)
    _, runner_key = issue_runner(actor=system, name="bench podman runners", namespaces=["bench-podman"])
    run_body = {"namespace": "bench-podman", "image": IMAGE, "command": ["true"]}
    pool = "true" if connection.vendor == "postgresql" else "false"
    with (
        tempfile.TemporaryDirectory(prefix="runner-bench-podman-") as directory,
        PodmanService(Path(directory)) as podman,
    ):
        service = ServiceProcess(
            env={"DATABASE_URL": test_database_url(), "DATABASE_POOL": pool},
            workers=2,
            args=("--worker-class", "gthread", "--threads", str(4 * concurrency + 8)),
        ).start()
        runners = Runners(service.url, runner_key, podman.socket, concurrency, 2, Path(directory))
        try:
            podman_run(IMAGE)  # warm: the image's layers in the page cache, podman's first-run set-up
            wait_succeeded(service.url, key, call(service.url, "RunJob", key, run_body)["job"]["jobId"])
            dispatch, floor, stages = [], [], []
            for _ in range(samples):  # alternately, so that the machine's load weighs on both alike
                called, started = time.time(), time.perf_counter()
                job_id = call(service.url, "RunJob", key, run_body)["job"]["jobId"]
                wait_succeeded(service.url, key, job_id)
                dispatch.append(time.perf_counter() - started)
                stages.append(_stages(Job.objects.get(job_id=job_id), called, time.time()))
                floor.append(podman_run(IMAGE))
            for label, values in (("RunJob → SUCCEEDED (true)", dispatch), ("podman run --rm (floor)", floor)):
                report.row(
                    f"dispatch: {label} p50 / p95",
                    f"{percentile(values, 0.5) * 1000:.0f} / {percentile(values, 0.95) * 1000:.0f} ms ({samples} each)",
                )
            report.row(
                "  where the time goes, p50 (server clock)",
                " / ".join(
                    f"{name} {percentile([s[i] for s in stages], 0.5) * 1000:.0f}" for i, name in enumerate(STAGES)
                )
                + " ms",
            )
            dispatch_ratio = percentile(dispatch, 0.5) / percentile(floor, 0.5)
            report.row(
                "  ratio p50 / p95",
                f"{dispatch_ratio:.2f}× / {percentile(dispatch, 0.95) / percentile(floor, 0.95):.2f}×",
            )

            started = time.perf_counter()
            with ThreadPoolExecutor(8) as submit:
                ids = list(
                    submit.map(lambda _: call(service.url, "RunJob", key, run_body)["job"]["jobId"], range(jobs))
                )
            while Job.objects.filter(job_id__in=ids, state=Job.State.SUCCEEDED).count() < jobs:
                if Job.objects.filter(job_id__in=ids, state__in=[Job.State.FAILED, Job.State.CANCELLED]).exists():
                    raise SystemExit("throughput: a job did not succeed")
                time.sleep(0.05)
            runner_rate = jobs / (time.perf_counter() - started)
        finally:
            runners.stop()
            service.stop()
        started = time.perf_counter()
        with ThreadPoolExecutor(2 * concurrency) as parallel:
            list(parallel.map(lambda _: podman_run(IMAGE), range(jobs)))
        podman_rate = jobs / (time.perf_counter() - started)
    throughput_ratio = runner_rate / podman_rate
    report.row(
        f"throughput: {jobs} jobs, 2 runners × {concurrency}",
        f"{runner_rate:.1f} jobs/s; podman run --rm, {2 * concurrency} at once: {podman_rate:.1f}/s "
        f"({throughput_ratio:.2f}×)",
    )
    return dispatch_ratio, throughput_ratio
