"""cprunner's kubernetes engine against a REAL cluster: run with scripts/test-kubernetes-cluster.

Not collected by the suite (the name does not match test_*.py): no kube-apiserver can be had on
the test machines, and a skipped test is not allowed. The script requires KUBECONFIG and fails
without it. The cluster runs the work; the runner API is the in-memory test double.

Environment: KUBECONFIG (required), CP_K8S_NAMESPACE (default "default"; the kubeconfig's user
needs the verbs of deploy/kubernetes/runner.yaml's Role there), CP_E2E_IMAGE (default
busybox:1.36, pulled by the cluster's nodes).
"""

from __future__ import annotations

import os
import threading
import time
import uuid

import pytest
from cprunner.engines.kubernetes import KubernetesEngine, api_client
from cprunner.runner import LABEL_RUNNER, Config, Runner
from cpsdk._gen.containers.runtime.v1 import runner_pb2 as pb

from tests.runner.fake_control_plane import KEY

if not os.environ.get("KUBECONFIG"):
    raise pytest.UsageError("the real-cluster test needs KUBECONFIG (scripts/test-kubernetes-cluster)")

NAMESPACE = os.environ.get("CP_K8S_NAMESPACE", "default")
IMAGE = os.environ.get("CP_E2E_IMAGE", "busybox:1.36")


@pytest.fixture(scope="module")
def engine():
    return KubernetesEngine(NAMESPACE, api_client())


@pytest.fixture(scope="module")
def runner(control_plane, engine):
    name = f"e2e-{uuid.uuid4().hex[:8]}"
    config = Config(url=control_plane.url, key=KEY, engine=engine, name=name, concurrency=2, poll_seconds=1)
    runner = Runner(config)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    yield runner
    runner.shutdown()
    runner.shutdown()
    thread.join(60)
    assert engine.list({LABEL_RUNNER: name}) == []  # it leaves nothing in the cluster


def wait_gone(engine, runner, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while engine.list({LABEL_RUNNER: runner.config.name}):
        assert time.monotonic() < deadline, "the runner's objects are still in the cluster"
        time.sleep(1)


def test_a_job_runs_on_the_cluster_with_its_env_output_and_exit_code(control_plane, runner, engine):
    work_id = control_plane.add(command=["sh", "-c", 'echo "hi $WHO"; exit 3'], env={"WHO": "cluster"}, image=IMAGE)
    finished = control_plane.wait_finished(work_id, timeout=300)  # the first pull may take a while
    assert (finished.result, finished.exit_code) == (pb.RESULT_EXITED, 3), finished.reason
    assert bytes(control_plane.lease(work_id).logs) == b"hi cluster\n"
    wait_gone(engine, runner)


def test_cancel_stops_the_pod_with_sigterm(control_plane, runner, engine):
    work_id = control_plane.add(command=["sh", "-c", "trap 'exit 42' TERM; while true; do sleep 1; done"], image=IMAGE)
    control_plane.wait_running(work_id, timeout=120)
    time.sleep(10)  # the pod is scheduled and its shell has set the trap
    control_plane.cancel(work_id, grace=20)
    finished = control_plane.wait_finished(work_id, timeout=120)
    assert (finished.result, finished.exit_code) == (pb.RESULT_CANCELLED, 42)
    wait_gone(engine, runner)


def test_a_timed_out_job_is_stopped(control_plane, runner, engine):
    work_id = control_plane.add(command=["sleep", "300"], image=IMAGE, timeout_seconds=15)
    finished = control_plane.wait_finished(work_id, timeout=180)
    assert finished.result == pb.RESULT_TIMED_OUT
    wait_gone(engine, runner)
