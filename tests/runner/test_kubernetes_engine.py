"""cprunner's kubernetes engine against kmock's emulator (the official client over HTTP) and the
runner API's test double.

The emulator has no controllers: `Kubelet` plays the job controller (a pod per Job, owned by
it, with the job-name label) and the kubelet (phases, container states, output, and graceful
termination: a finalizer holds a deleted pod until the "kubelet" reports its exit), as Argo's
and Dagster's tests play pod phases.
"""

from __future__ import annotations

import base64
import json
import signal
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import yaml
from cprunner.engines import ContainerSpec, EngineUnavailable
from cprunner.engines.kubernetes import CONTAINER, JOB_NAME_LABEL, KubernetesEngine
from cprunner.runner import LABEL_RUNNER, LABEL_WORK, Config, Runner, lease_digest
from cpsdk._gen.containers.runtime.v1 import runner_pb2 as pb
from kubernetes import client

from tests.runner.fake_control_plane import KEY
from tests.runner.kube_emulator import EmulatorThread
from tests.runner.support import RunnerProcess
from tests.support.live import ROOT, free_port

ENGINE_AGENT = "cprunner-under-test"  # the engine's User-Agent; the test's own calls are "test"
ROLE = ROOT / "deploy" / "kubernetes" / "runner.yaml"
TERMINATING = "kubelet.test/terminating"  # the kubelet's stand-in: holds a deleted pod until it "exits"


def eventually(fn, timeout: float = 20.0, what: str = ""):
    deadline = time.monotonic() + timeout
    while not (value := fn()):
        assert time.monotonic() < deadline, f"timed out waiting for {what or fn}"
        time.sleep(0.05)
    return value


@pytest.fixture(scope="module")
def emulator():
    with EmulatorThread() as emulator:
        yield emulator


@pytest.fixture
def namespace():
    return f"ns-{uuid.uuid4().hex[:8]}"  # each test its own: nothing leaks between them


def make_engine(emulator, namespace, watch_seconds: float = 30, **options) -> KubernetesEngine:
    # kmock does not replay changes from a resourceVersion (a real API server does): a change that
    # falls between two watches is not seen, so the runner's watches here are long, as in production.
    return KubernetesEngine(namespace, emulator.client(ENGINE_AGENT), watch_seconds=watch_seconds, **options)


@pytest.fixture
def start_runner(emulator, control_plane, namespace):
    """start_runner(**engine options) → a Runner (two slots) in a thread, stopped after the test."""
    started: list[tuple[Runner, threading.Thread]] = []

    def start(name: str = "", **options) -> Runner:
        config = Config(
            url=control_plane.url,
            key=KEY,
            engine=make_engine(emulator, namespace, **options),
            name=name or f"kube-{uuid.uuid4().hex[:8]}",
            concurrency=2,
            poll_seconds=1,
            stop_grace=1,
            shutdown_grace=1,
        )
        runner = Runner(config)
        thread = threading.Thread(target=runner.run, daemon=True)
        thread.start()
        started.append((runner, thread))
        return runner

    yield start
    for runner, thread in started:
        runner.shutdown()
        runner.shutdown()  # release at once
        thread.join(30)


class Kubelet:
    """The test's job controller and kubelet, through the API as they would act."""

    def __init__(self, emulator, namespace: str):
        self.emulator = emulator.emulator
        self.namespace = namespace
        self.core = client.CoreV1Api(emulator.api)
        self.batch = client.BatchV1Api(emulator.api)

    def job(self, work_id: str) -> client.V1Job:
        def found():
            jobs = self.batch.list_namespaced_job(self.namespace, label_selector=f"{LABEL_WORK}={work_id}").items
            return jobs[0] if jobs else None

        return eventually(found, what=f"the Job of {work_id}")

    def secret(self, name: str) -> client.V1Secret:
        return self.core.read_namespaced_secret(name, self.namespace)

    def names(self, kind: str) -> set[str]:
        lists = {
            "jobs": self.batch.list_namespaced_job,
            "pods": self.core.list_namespaced_pod,
            "secrets": self.core.list_namespaced_secret,
            "services": self.core.list_namespaced_service,
        }
        return {item.metadata.name for item in lists[kind](self.namespace).items}

    def start_job_pod(self, job: client.V1Job, *, run: bool = True) -> str:
        """As the job controller: the Job's pod, owned by it; then (the kubelet) running."""
        name = f"{job.metadata.name}-x7k2p"
        template = job.spec.template
        pod = client.V1Pod(
            metadata=client.V1ObjectMeta(
                name=name,
                labels={**(template.metadata.labels or {}), JOB_NAME_LABEL: job.metadata.name},
                owner_references=[
                    client.V1OwnerReference(
                        api_version="batch/v1", kind="Job", name=job.metadata.name, uid=job.metadata.uid
                    )
                ],
                finalizers=[TERMINATING],
            ),
            spec=template.spec,
        )
        self.core.create_namespaced_pod(self.namespace, pod)
        if run:
            self.run(name)
        return name

    def _status(self, name: str, phase: str, state: dict) -> None:
        status = {"name": CONTAINER, "image": "img", "imageID": "", "ready": "running" in state, "restartCount": 0}
        body = {"status": {"phase": phase, "containerStatuses": [{**status, "state": state}]}}
        self.core.patch_namespaced_pod_status(name, self.namespace, body)

    def run(self, name: str) -> None:
        self._status(name, "Running", {"running": {"startedAt": "2026-01-01T00:00:00Z"}})

    def write(self, name: str, data: bytes) -> None:
        self.emulator.logs.setdefault(name, bytearray()).extend(data)

    def exit(self, name: str, code: int) -> None:
        terminated = {"exitCode": code, "reason": "Completed" if code == 0 else "Error"}
        self._status(name, "Succeeded" if code == 0 else "Failed", {"terminated": terminated})

    def wait_state(self, name: str, reason: str) -> None:
        self._status(name, "Pending", {"waiting": {"reason": reason, "message": "pull access denied"}})

    def terminate_when_deleted(self, name: str, code: int) -> None:
        """A deleted pod gets SIGTERM: the container exits with `code`, then the pod goes."""

        def deleting():
            return self.core.read_namespaced_pod(name, self.namespace).metadata.deletion_timestamp

        eventually(deleting, what=f"the deletion of pod {name}")
        self.exit(name, code)
        self.core.patch_namespaced_pod(name, self.namespace, {"metadata": {"finalizers": []}})

    def calls(self, verb: str, resource: str, name: str | None = None) -> list:
        return [
            call
            for call in self.emulator.calls
            if call.verb == verb
            and call.resource == resource
            and call.namespace == self.namespace
            and (name is None or call.name == name)
        ]


@pytest.fixture
def kubelet(emulator, namespace):
    return Kubelet(emulator, namespace)


def assert_removed(kubelet: Kubelet, job: str) -> None:
    eventually(lambda: job not in kubelet.names("jobs") and job not in kubelet.names("secrets"), what="removal")
    (deletion,) = kubelet.calls("delete", "jobs", job)
    assert deletion.params["propagationPolicy"] == "Foreground"


def test_a_job_becomes_a_job_with_its_labels_limits_and_env_secret(control_plane, start_runner, kubelet):
    runner = start_runner()
    resources = pb.Resources(memory_bytes=64 << 20, milli_cpus=500, max_pids=64)
    work_id = control_plane.add(
        command=["sh", "-c", 'echo "hi $WHO"; exit 3'], env={"WHO": "there"}, resources=resources, timeout_seconds=300
    )
    job = kubelet.job(work_id)
    lease = control_plane.lease(work_id)
    name = job.metadata.name
    assert job.metadata.labels == {
        "cp.runner": runner.config.name,
        "cp.work-id": work_id,
        "cp.kind": "job",
        "cp.attempt": "1",
        "cp.lease": lease_digest(lease.token),
        "cp.namespace": "team-a",
    }
    assert job.spec.backoff_limit == 0
    assert job.spec.active_deadline_seconds == 300 + 60  # the runner's own deadline comes first
    pod = job.spec.template.spec
    assert (pod.restart_policy, pod.automount_service_account_token) == ("Never", False)
    (container,) = pod.containers
    assert container.args == ["sh", "-c", 'echo "hi $WHO"; exit 3'] and container.command is None
    assert container.env is None and container.env_from[0].secret_ref.name == name
    assert container.resources.limits == {"memory": str(64 << 20), "cpu": "500m"}
    assert container.resources.requests == container.resources.limits
    # The Secret comes first (the Job's pod reads it), then the Job, then the Job owns the Secret.
    secret = eventually(lambda: (s := kubelet.secret(name)).metadata.owner_references and s, what="the owner")
    assert {k: base64.b64decode(v).decode() for k, v in secret.data.items()} == {"WHO": "there"}
    (owner,) = secret.metadata.owner_references
    assert (owner.kind, owner.name, owner.uid) == ("Job", name, job.metadata.uid)
    everything = json.dumps([call.body for call in kubelet.emulator.calls if call.namespace == kubelet.namespace])
    assert lease.token not in everything  # labels carry a digest of the lease, never the token

    pod_name = kubelet.start_job_pod(job)
    kubelet.write(pod_name, b"hi there\n")
    kubelet.exit(pod_name, 3)
    finished = control_plane.wait_finished(work_id)
    assert (finished.result, finished.exit_code, finished.signal) == (pb.RESULT_EXITED, 3, 0)
    assert bytes(control_plane.lease(work_id).logs) == b"hi there\n"
    assert_removed(kubelet, name)


def test_output_streams_while_the_job_runs_and_success_reports_zero(control_plane, start_runner, kubelet):
    start_runner()
    work_id = control_plane.add(command=["work"])
    pod = kubelet.start_job_pod(kubelet.job(work_id))
    for n in range(3):
        kubelet.write(pod, f"line {n}\n".encode())
        eventually(lambda n=n: f"line {n}\n".encode() in control_plane.lease(work_id).logs, what=f"line {n}")
    assert control_plane.lease(work_id).finished is None  # still running: followed, not read at the end
    kubelet.exit(pod, 0)
    finished = control_plane.wait_finished(work_id)
    assert (finished.result, finished.exit_code) == (pb.RESULT_EXITED, 0)
    assert bytes(control_plane.lease(work_id).logs) == b"line 0\nline 1\nline 2\n"


def test_a_killed_container_reports_its_signal(control_plane, start_runner, kubelet):
    start_runner()
    work_id = control_plane.add(command=["work"])
    job = kubelet.job(work_id)
    kubelet.exit(kubelet.start_job_pod(job), 137)  # OOM-killed: SIGKILL
    finished = control_plane.wait_finished(work_id)
    assert (finished.result, finished.exit_code, finished.signal) == (pb.RESULT_EXITED, 137, 9)
    assert_removed(kubelet, job.metadata.name)


def test_an_image_the_cluster_cannot_pull_fails_the_job_with_the_reason(control_plane, start_runner, kubelet):
    start_runner()
    work_id = control_plane.add(command=["work"], image="registry.invalid/nothing:1")
    job = kubelet.job(work_id)
    pod = kubelet.start_job_pod(job, run=False)
    kubelet.wait_state(pod, "ErrImagePull")
    finished = control_plane.wait_finished(work_id)
    assert finished.result == pb.RESULT_ERROR
    assert "ErrImagePull: pull access denied" in finished.reason
    assert_removed(kubelet, job.metadata.name)


def test_a_timed_out_job_is_stopped_with_grace_then_deleted(control_plane, start_runner, kubelet):
    start_runner()
    work_id = control_plane.add(command=["work"], timeout_seconds=1)
    job = kubelet.job(work_id)
    assert job.spec.active_deadline_seconds == 61
    pod = kubelet.start_job_pod(job)
    kubelet.terminate_when_deleted(pod, 143)  # SIGTERM at the deadline
    finished = control_plane.wait_finished(work_id)
    assert (finished.result, finished.exit_code, finished.signal) == (pb.RESULT_TIMED_OUT, 143, 15)
    (stop,) = kubelet.calls("delete", "pods", pod)
    assert stop.params["gracePeriodSeconds"] == "1"  # --stop-grace
    assert_removed(kubelet, job.metadata.name)


def test_cancel_deletes_the_pod_with_the_grace_then_the_job_with_propagation(control_plane, start_runner, kubelet):
    start_runner()
    work_id = control_plane.add(command=["work"])
    job = kubelet.job(work_id)
    pod = kubelet.start_job_pod(job)
    control_plane.wait_running(work_id)
    control_plane.cancel(work_id, grace=3)
    kubelet.terminate_when_deleted(pod, 143)
    finished = control_plane.wait_finished(work_id)
    assert (finished.result, finished.exit_code, finished.signal) == (pb.RESULT_CANCELLED, 143, 15)
    (stop,) = kubelet.calls("delete", "pods", pod)
    assert stop.params["gracePeriodSeconds"] == "3"  # the server's grace
    assert_removed(kubelet, job.metadata.name)


def test_a_lost_lease_deletes_the_job_at_once(control_plane, start_runner, kubelet):
    start_runner()
    work_id = control_plane.add(command=["work"])
    job = kubelet.job(work_id)
    pod = kubelet.start_job_pod(job)
    control_plane.wait_running(work_id)
    control_plane.revoke(work_id)
    assert_removed(kubelet, job.metadata.name)
    (deletion,) = kubelet.calls("delete", "jobs", job.metadata.name)
    assert deletion.params["gracePeriodSeconds"] == "0"
    kubelet.core.delete_namespaced_pod(pod, kubelet.namespace)  # the garbage collector's part
    kubelet.terminate_when_deleted(pod, 137)
    time.sleep(1)  # a FinishWork would come right after the removal
    assert control_plane.lease(work_id).finished is None


def test_a_sandbox_is_a_pod_with_its_own_key_secret_and_a_preview_service(control_plane, start_runner, kubelet):
    start_runner(preview_domain="preview.example.test", preview_port=3000)
    work_id = control_plane.add(pb.WORK_KIND_SANDBOX, ["serve"], agent_key="cpk_agent-secret", workspace_id="ws_1")
    eventually(lambda: kubelet.names("pods"), what="the sandbox's pod")
    (name,) = kubelet.names("pods")
    pod = kubelet.core.read_namespaced_pod(name, kubelet.namespace)
    assert pod.metadata.labels[LABEL_WORK] == work_id and pod.metadata.labels["cp.kind"] == "sandbox"
    assert pod.spec.automount_service_account_token is False
    (container,) = pod.spec.containers
    assert container.env is None and container.env_from[0].secret_ref.name == name  # never in the pod spec
    env = {k: base64.b64decode(v).decode() for k, v in kubelet.secret(name).data.items()}
    assert env["CP_AGENT_KEY"] == "cpk_agent-secret" and env["CP_WORKSPACE_ID"] == "ws_1"
    eventually(lambda: kubelet.secret(name).metadata.owner_references, what="the Secret's owner")
    assert kubelet.secret(name).metadata.owner_references[0].kind == "Pod"
    assert "cpk_agent-secret" not in json.dumps([c.body for c in kubelet.calls("create", "pods")])
    eventually(lambda: name in kubelet.names("services"), what="the preview Service")
    service = kubelet.core.read_namespaced_service(name, kubelet.namespace)
    assert service.metadata.annotations["cp.preview-host"] == f"{work_id.replace('_', '-')}.preview.example.test"
    assert service.spec.selector == pod.metadata.labels
    assert (service.spec.ports[0].port, service.spec.ports[0].target_port) == (80, 3000)

    kubelet.run(name)
    control_plane.wait_running(work_id)
    kubelet.exit(name, 0)
    finished = control_plane.wait_finished(work_id)
    assert (finished.result, finished.exit_code) == (pb.RESULT_STOPPED, 0)
    eventually(lambda: not kubelet.names("secrets") and not kubelet.names("services"), what="the Secret and Service")


def test_builds_record_the_reference_digest_when_it_pins_one(control_plane, start_runner, kubelet):
    start_runner()
    digest = "sha256:" + "ab" * 32
    pinned = control_plane.add(pb.WORK_KIND_BUILD, image=f"registry.example/app@{digest}")
    tagged = control_plane.add(pb.WORK_KIND_BUILD, image="registry.example/app:1")
    assert control_plane.wait_finished(pinned).image_digest == digest
    finished = control_plane.wait_finished(tagged)
    assert (finished.result, finished.image_digest) == (pb.RESULT_BUILT, "")  # the cluster resolves tags
    assert not kubelet.names("jobs")  # nothing runs in the cluster for a build


def test_a_restarted_runner_deletes_the_jobs_and_secrets_it_no_longer_holds(
    emulator, control_plane, kubelet, namespace, tmp_path
):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "kmock", "cluster": {"server": emulator.url}}],
                "users": [{"name": "test", "user": {"token": "unused"}}],
                "contexts": [{"name": "kmock", "context": {"cluster": "kmock", "user": "test"}}],
                "current-context": "kmock",
            }
        )
    )
    name = f"kube-{uuid.uuid4().hex[:8]}"

    def runner(log: str) -> RunnerProcess:
        process = RunnerProcess(control_plane.url, KEY, name, "--engine", "kubernetes", "--k8s-namespace", namespace,
                                log_path=tmp_path / log)  # fmt: skip
        process.env["KUBECONFIG"] = str(kubeconfig)
        return process.start()

    first = runner("first.log")
    try:
        work_id = control_plane.add(command=["work"])
        job = kubelet.job(work_id)
        kubelet.start_job_pod(job)
        control_plane.wait_running(work_id)
    finally:
        first.signal(signal.SIGKILL)
        first.wait()
    # What a killed runner left: its Job (and env Secret), and a Secret whose Job never came.
    orphan = client.V1Secret(metadata=client.V1ObjectMeta(name="cp-orphan", labels={LABEL_RUNNER: name}))
    kubelet.core.create_namespaced_secret(namespace, orphan)
    assert job.metadata.name in kubelet.names("jobs")

    second = runner("second.log")
    try:
        assert_removed(kubelet, job.metadata.name)
        eventually(lambda: "cp-orphan" not in kubelet.names("secrets"), what="the orphan Secret")
        assert "removing orphan container job/" in (tmp_path / "second.log").read_text()
    finally:
        second.stop()


def role_rules() -> set[tuple[str, str]]:
    (role,) = [doc for doc in yaml.safe_load_all(ROLE.read_text()) if doc["kind"] == "Role"]
    return {(resource, verb) for rule in role["rules"] for resource in rule["resources"] for verb in rule["verbs"]}


def test_the_runner_role_allows_exactly_what_the_engine_calls(emulator, namespace, kubelet):
    """Every engine operation, each path through it, against the emulator; the (resource, verb)
    pairs it called must be the Role's rules: nothing missing (a 403 in a cluster), nothing more."""
    engine = make_engine(emulator, namespace, watch_seconds=1, preview_domain="preview.example.test")
    engine.version()
    labels = {LABEL_RUNNER: "rbac", LABEL_WORK: "job_rbac"}

    def spec(name: str, kind: str = "job") -> ContainerSpec:
        return ContainerSpec(name=name, image="img", command=["x"], env={"A": "b"}, labels=labels, kind=kind)

    def follow(container_id: str) -> threading.Thread:
        def read():
            output.extend(engine.logs(container_id))

        thread = threading.Thread(target=read, daemon=True)
        thread.start()
        return thread

    output: list[bytes] = []
    pool = ThreadPoolExecutor(4)
    done = engine.start(spec("cp-done"))  # runs to its end
    pod = kubelet.start_job_pod(kubelet.batch.read_namespaced_job("cp-done", namespace))
    reader = follow(done)
    waiting = pool.submit(engine.wait, done)
    kubelet.write(pod, b"out\n")
    time.sleep(2.5)  # longer than one watch (1 s): wait() also reads the Job between watches
    kubelet.exit(pod, 0)
    assert waiting.result(10).exit_code == 0
    reader.join(10)
    assert b"".join(output) == b"out\n"

    stopped = engine.start(spec("cp-stopped"))  # stopped with a grace, as on cancel or timeout
    pod = kubelet.start_job_pod(kubelet.batch.read_namespaced_job("cp-stopped", namespace))
    waiting = pool.submit(engine.wait, stopped)
    threading.Thread(target=kubelet.terminate_when_deleted, args=(pod, 143), daemon=True).start()
    engine.stop(stopped, 1)
    assert waiting.result(10).exit_code == 143

    sandbox = engine.start(spec("cp-sandbox", "sandbox"))  # a Pod, a Secret and a preview Service
    kubelet.run("cp-sandbox")
    waiting = pool.submit(engine.wait, sandbox)
    time.sleep(2.5)  # as above: wait() reads the Pod between watches
    kubelet.exit("cp-sandbox", 0)
    assert waiting.result(10).exit_code == 0

    assert {c.id for c in engine.list(labels)} == {done, stopped, sandbox}  # the runner's sweep
    engine.stop(sandbox, 0)
    for container_id in (done, stopped, sandbox):
        engine.remove(container_id)
    assert engine.list(labels) == []

    called = {
        (c.resource, c.verb) for c in emulator.emulator.calls if c.agent == ENGINE_AGENT and c.namespace == namespace
    }
    assert called == role_rules()


def test_an_api_server_that_does_not_answer_makes_the_engine_unavailable_not_failed(namespace):
    configuration = client.Configuration()
    configuration.host = f"http://127.0.0.1:{free_port()}"  # nothing listens
    engine = KubernetesEngine(namespace, client.ApiClient(configuration))
    with pytest.raises(EngineUnavailable, match="does not answer"):
        engine.version()
    with pytest.raises(EngineUnavailable, match="create the env Secret"):  # the runner hands the work back
        engine.start(ContainerSpec(name="cp-x", image="img", command=[], env={"A": "secret-value"}))
