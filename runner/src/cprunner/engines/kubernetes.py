"""The kubernetes engine: each job is a batch/v1 Job, each sandbox a Pod, in one namespace.

The runner keeps the lease and does everything else as with podman; the cluster only runs
containers. Per piece of work the engine creates a Secret holding its env (the agent key too,
for sandboxes), then the Job or Pod that alone takes its env from it, then makes the object the
Secret's owner so that the garbage collector removes it with the work even if the runner does
not. Ids are "job/NAME", "pod/NAME" (a sandbox) or "secret/NAME" (an env Secret left without
owner by a runner killed between the two creations; list() reports it so that the sweep
removes it).

What the engine calls, and so what its Role must allow (deploy/kubernetes/runner.yaml; a test
compares the two): jobs create/get/list/delete, pods create/get/list/watch/delete, pods/log get,
secrets create/patch/list/delete, services create/delete (sandbox previews only).
"""

from __future__ import annotations

import base64
import logging
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

from .base import Container, ContainerSpec, EngineError, EngineUnavailable, ExitStatus, Image

T = TypeVar("T")

log = logging.getLogger("cprunner")

CONTAINER = "work"  # the one container of every pod
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"  # set on a Job's pods by the job controller
PREVIEW_HOST_ANNOTATION = "cp.preview-host"
# The runner stops work at timeout_seconds itself (RESULT_TIMED_OUT, after the stop grace); the
# cluster's activeDeadlineSeconds is a backstop for a runner that is gone, so it comes later.
DEADLINE_MARGIN = 60
WATCH_SECONDS = 30  # one watch call; wait() re-checks the Job between calls
RETRY_SECONDS = 1.0  # after a failed watch
# A container waiting for one of these will not start by itself: the work fails (RESULT_ERROR).
FATAL_WAITING = {
    "ErrImagePull",
    "ImagePullBackOff",
    "ErrImageNeverPull",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
}
PULL_POLICIES = {"always": "Always", "missing": "IfNotPresent", "": "IfNotPresent", "never": "Never"}
IN_CLUSTER_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
_INVALID = re.compile(r"[^a-z0-9-]+")


def default_namespace() -> str:
    """The pod's own namespace in a cluster, else "default"."""
    try:
        return IN_CLUSTER_NAMESPACE.read_text().strip() or "default"
    except OSError:
        return "default"


def api_client() -> client.ApiClient:
    """In-cluster credentials (the runner's ServiceAccount), else KUBECONFIG / ~/.kube/config."""
    try:
        config.load_incluster_config()
    except config.ConfigException:
        try:
            config.load_kube_config()
        except (config.ConfigException, OSError) as exc:
            raise EngineError(f"no kubernetes credentials: not in a cluster, and {exc}") from None
    return client.ApiClient()


def object_name(name: str) -> str:
    """A DNS label (a Job's name also becomes a label value on its pods: 63 characters at most)."""
    return _INVALID.sub("-", name.lower()).strip("-")[:63].rstrip("-")


def _labels(labels: dict[str, str]) -> dict[str, str]:
    # Label values: 63 characters of [A-Za-z0-9_.-]; the runner's labels fit (ids, digests, names).
    return {key: re.sub(r"[^A-Za-z0-9_.-]", "-", value)[:63].strip("-_.") for key, value in labels.items()}


def _selector(labels: dict[str, str]) -> str:
    return ",".join(f"{key}={value}" for key, value in _labels(labels).items())


def _reason(exc: ApiException) -> str:
    return f"{exc.status} {exc.reason}"


def exit_status(pod: client.V1Pod) -> ExitStatus | None:
    """The work's end as the pod reports it, or None while it has not ended."""
    status = pod.status
    for container in (status and status.container_statuses) or []:
        if container.name != CONTAINER or container.state is None:
            continue
        if container.state.terminated is not None:
            ended = container.state.terminated
            code = ended.exit_code
            signal = ended.signal or (code - 128 if 128 < code <= 128 + 64 else 0)
            return ExitStatus(exit_code=code, signal=signal)
        waiting = container.state.waiting
        if waiting is not None and waiting.reason in FATAL_WAITING:
            return ExitStatus(exit_code=-1, error=f"the pod cannot start: {waiting.reason}: {waiting.message or ''}")
    if status is not None and status.phase == "Failed":  # e.g. evicted before the container ran
        return ExitStatus(exit_code=-1, error=f"the pod failed: {status.reason or ''} {status.message or ''}".strip())
    return None


def _started(pod: client.V1Pod) -> bool:
    statuses = (pod.status and pod.status.container_statuses) or []
    return any(c.name == CONTAINER and c.state and (c.state.running or c.state.terminated) for c in statuses)


class KubernetesEngine:
    name = "kubernetes"
    images = True  # the cluster pulls; image()/pull() only read the reference (no builds)

    def __init__(
        self,
        namespace: str,
        api: client.ApiClient | None = None,
        *,
        preview_domain: str = "",
        preview_port: int = 8080,
        watch_seconds: float = WATCH_SECONDS,
    ):
        self.namespace = namespace
        self.api = api or api_client()
        self.core = client.CoreV1Api(self.api)
        self.batch = client.BatchV1Api(self.api)
        self.preview_domain = preview_domain
        self.preview_port = preview_port
        self.watch_seconds = watch_seconds

    def version(self) -> str:
        info = self._call("tell its version", client.VersionApi(self.api).get_code)
        return f"kubernetes {info.git_version} namespace {self.namespace}"

    # -- starting ---------------------------------------------------------------------------

    def _pod_spec(self, spec: ContainerSpec, secret: str) -> client.V1PodSpec:
        limits = {}
        if spec.limits.memory_bytes:
            limits["memory"] = str(spec.limits.memory_bytes)
        if spec.limits.milli_cpus:
            limits["cpu"] = f"{spec.limits.milli_cpus}m"
        container = client.V1Container(
            name=CONTAINER,
            image=spec.image,
            args=spec.command or None,  # as `podman run IMAGE CMD…`: replaces CMD, keeps ENTRYPOINT
            env_from=[client.V1EnvFromSource(secret_ref=client.V1SecretEnvSource(name=secret))],
            image_pull_policy=PULL_POLICIES.get(spec.pull_policy, "IfNotPresent"),
            # requests = limits: the scheduler reserves what the work may use (Guaranteed QoS).
            resources=client.V1ResourceRequirements(limits=limits or None, requests=limits or None),
        )
        return client.V1PodSpec(
            containers=[container],
            restart_policy="Never",
            # The work gets no credentials to this cluster (the runner's ServiceAccount is not its).
            automount_service_account_token=False,
            enable_service_links=False,
            host_network=spec.network == "host" or None,
        )

    def start(self, spec: ContainerSpec) -> str:
        name = object_name(spec.name)
        labels = _labels(spec.labels)
        meta = client.V1ObjectMeta(name=name, labels=labels)
        data = {key: base64.b64encode(value.encode()).decode() for key, value in spec.env.items()}
        self._create("the env Secret", self.core.create_namespaced_secret, client.V1Secret(metadata=meta, data=data))
        try:
            if spec.kind == "sandbox":
                body = client.V1Pod(metadata=meta, spec=self._pod_spec(spec, name))
                owner = self._create("the sandbox's Pod", self.core.create_namespaced_pod, body)
                container_id = f"pod/{name}"
            else:
                body = client.V1Job(
                    metadata=meta,
                    spec=client.V1JobSpec(
                        backoff_limit=0,  # retries are the control plane's (a new attempt, a new lease)
                        active_deadline_seconds=spec.timeout_seconds + DEADLINE_MARGIN
                        if spec.timeout_seconds
                        else None,
                        template=client.V1PodTemplateSpec(
                            metadata=client.V1ObjectMeta(labels=labels), spec=self._pod_spec(spec, name)
                        ),
                    ),
                )
                owner = self._create("the Job", self.batch.create_namespaced_job, body)
                container_id = f"job/{name}"
            reference = client.V1OwnerReference(
                api_version="v1" if spec.kind == "sandbox" else "batch/v1",
                kind="Pod" if spec.kind == "sandbox" else "Job",
                name=name,
                uid=owner.metadata.uid,
            )
            patch = {"metadata": {"ownerReferences": [self.api.sanitize_for_serialization(reference)]}}
            self._call("own the env Secret", self.core.patch_namespaced_secret, name, self.namespace, patch)
            if spec.kind == "sandbox" and self.preview_domain:
                self._create("the preview Service", self.core.create_namespaced_service, self._service(spec, reference))
        except EngineError:
            self.remove(f"{'pod' if spec.kind == 'sandbox' else 'job'}/{name}")
            raise
        return container_id

    def _service(self, spec: ContainerSpec, owner: client.V1OwnerReference) -> client.V1Service:
        # The preview URL is https://<work id, - for _>.<domain>/ (workloads.services.sandboxes);
        # a wildcard Ingress or gateway routes that host to this Service (named as the pod).
        host = f"{spec.labels.get('cp.work-id', spec.name).replace('_', '-')}.{self.preview_domain}"
        labels = _labels(spec.labels)
        return client.V1Service(
            metadata=client.V1ObjectMeta(
                name=owner.name, labels=labels, annotations={PREVIEW_HOST_ANNOTATION: host}, owner_references=[owner]
            ),
            spec=client.V1ServiceSpec(
                selector=labels, ports=[client.V1ServicePort(name="http", port=80, target_port=self.preview_port)]
            ),
        )

    def _call(self, what: str, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            raise self._failure(what, exc) from None

    def _failure(self, what: str, exc: Exception) -> EngineError:
        """The API server down or failing: EngineUnavailable (the work is handed back, not failed)."""
        host = self.api.configuration.host
        if not isinstance(exc, ApiException):  # connection refused or reset, a timeout
            return EngineUnavailable(f"the kubernetes API at {host} does not answer ({what}): {exc}")
        if exc.status is None or exc.status >= 500 or exc.status == 429:
            return EngineUnavailable(f"the kubernetes API at {host} failed to {what}: {_reason(exc)}")
        return EngineError(f"kubernetes refused to {what} in namespace {self.namespace}: {_reason(exc)}")

    def _create(self, what: str, fn, body):
        return self._call(f"create {what}", fn, self.namespace, body)

    # -- following ----------------------------------------------------------------------------

    @staticmethod
    def _pod_selector(container_id: str) -> dict[str, str]:
        """list_namespaced_pod's arguments for the work's pod(s): a Job's, or the sandbox Pod."""
        kind, name = container_id.split("/", 1)
        if kind == "job":
            return {"label_selector": f"{JOB_NAME_LABEL}={name}"}
        return {"field_selector": f"metadata.name={name}"}

    def _pods(self, container_id: str, since: str | None) -> tuple[watch.Watch, Iterator[dict]]:
        """One watch of the work's pod(s): every change after resource version `since`, or (None)
        the current pods first (as ADDED), then each change. The Watch holds the last version."""
        watcher = watch.Watch()
        stream = watcher.stream(
            self.core.list_namespaced_pod,
            self.namespace,
            resource_version=since,
            timeout_seconds=max(1, int(self.watch_seconds)),
            _request_timeout=self.watch_seconds + 5,  # a silent connection does not hang the caller
            **self._pod_selector(container_id),
        )
        return watcher, stream

    def _job_ended(self, container_id: str) -> ExitStatus | None:
        """Between watches: the Job (or sandbox Pod) is gone, or the Job failed without a pod."""
        kind, name = container_id.split("/", 1)
        try:
            if kind == "pod":
                return exit_status(self.core.read_namespaced_pod(name, self.namespace))
            job = self.batch.read_namespaced_job(name, self.namespace)
        except ApiException as exc:
            if exc.status == 404:
                return ExitStatus(exit_code=-1)
            raise
        for condition in (job.status and job.status.conditions) or []:
            if condition.type == "Failed" and condition.status == "True":
                return ExitStatus(exit_code=-1, error=f"the Job failed: {condition.reason}: {condition.message or ''}")
        return None

    def _follow(
        self, container_id: str, decide: Callable[[str, client.V1Pod], T | None]
    ) -> tuple[T | None, ExitStatus | None]:
        """Watches the work's pod(s) until decide(event type, pod) returns something: (that, None);
        or until the Job (Pod) ends with nothing to tell through a pod: (None, its end).

        An unreachable or failing API server is waited out (the work goes on without the runner
        watching it); only a refusal (401, 403) is an error.
        """
        since = None  # each watch resumes where the last ended: no change falls between two
        while True:
            try:
                watcher, stream = self._pods(container_id, since)
                for event in stream:
                    if (value := decide(event["type"], event["object"])) is not None:
                        return value, None
                since = watcher.resource_version
                ended = self._job_ended(container_id)
                if ended is not None:
                    return None, ended
            except ApiException as exc:
                if exc.status in (401, 403):
                    raise EngineError(f"kubernetes refused to follow {container_id}: {_reason(exc)}") from None
                if exc.status == 410:  # the version is too old to resume from: start from the current state
                    since = None
                    continue
                log.warning("following %s: %s; again in %.0f s", container_id, _reason(exc), RETRY_SECONDS)
                time.sleep(RETRY_SECONDS)
            except Exception as exc:  # connection refused or reset, a read timeout
                log.warning("following %s: %s; again in %.0f s", container_id, exc, RETRY_SECONDS)
                time.sleep(RETRY_SECONDS)

    def wait(self, container_id: str) -> ExitStatus:
        if container_id.startswith("secret/"):
            return ExitStatus(exit_code=-1)

        def ended(event: str, pod: client.V1Pod) -> ExitStatus | None:
            status = exit_status(pod)
            if status is None and event == "DELETED":  # gone before its container reported an end
                return ExitStatus(exit_code=-1)
            return status

        status, end = self._follow(container_id, ended)
        return status or end

    def _pod_started(self, container_id: str) -> str:
        """The name of the work's pod once its container runs (or ran); "" if it never will."""

        def started(event: str, pod: client.V1Pod) -> str | None:
            if _started(pod):
                return pod.metadata.name
            if event == "DELETED" or exit_status(pod) is not None:
                return ""
            return None

        name, _ = self._follow(container_id, started)
        return name or ""

    def logs(self, container_id: str, follow: bool = True) -> Iterator[bytes]:
        if container_id.startswith("secret/"):
            return
        if follow:
            pod = self._pod_started(container_id)
        else:  # what there is now, of a pod that ran
            selector = self._pod_selector(container_id)
            pods = self._call("list the work's pods", self.core.list_namespaced_pod, self.namespace, **selector)
            pod = next((p.metadata.name for p in pods.items if _started(p)), "")
        if not pod:
            return
        response = self._call(
            f"read the output of pod {pod}",
            self.core.read_namespaced_pod_log,
            pod,
            self.namespace,
            container=CONTAINER,
            follow=follow,
            _preload_content=False,
        )
        try:
            yield from response.stream(65536)
        finally:
            response.release_conn()

    # -- stopping -------------------------------------------------------------------------

    def stop(self, container_id: str, grace: float) -> None:
        """SIGTERM now, SIGKILL after `grace`: the pods are deleted with that grace period (a Job's
        own deletion would give them their default grace); the Job stays until remove()."""
        kind, name = container_id.split("/", 1)
        if kind == "secret":
            return
        if kind == "pod":
            names = [name]
        else:
            pods = self._call("list the Job's pods", self.core.list_namespaced_pod, self.namespace,
                              **self._pod_selector(container_id))  # fmt: skip
            names = [pod.metadata.name for pod in pods.items]
        for pod in names:
            self._delete("pod", self.core.delete_namespaced_pod, pod, grace_period_seconds=max(0, round(grace)))

    def _delete(self, what: str, fn, name: str, **options) -> None:
        try:
            fn(name, self.namespace, **options)
        except Exception as exc:
            if not (isinstance(exc, ApiException) and exc.status == 404):  # gone already: done
                raise self._failure(f"delete {what} {name}", exc) from None

    def remove(self, container_id: str) -> None:
        """Deletes the Job (its pods with it: Foreground propagation, killed at once), the Pod, and
        the env Secret and preview Service (their owner references would also have them collected)."""
        kind, name = container_id.split("/", 1)
        if kind == "job":
            self._delete("Job", self.batch.delete_namespaced_job, name,
                         propagation_policy="Foreground", grace_period_seconds=0)  # fmt: skip
        elif kind == "pod":
            self._delete("Pod", self.core.delete_namespaced_pod, name, grace_period_seconds=0)
            if self.preview_domain:
                self._delete("Service", self.core.delete_namespaced_service, name)
        self._delete("Secret", self.core.delete_namespaced_secret, name)

    def list(self, labels: dict[str, str]) -> list[Container]:
        selector = _selector(labels)
        jobs = self._call("list Jobs", self.batch.list_namespaced_job, self.namespace, label_selector=selector)
        pods = self._call("list Pods", self.core.list_namespaced_pod, self.namespace, label_selector=selector)
        secrets = self._call("list Secrets", self.core.list_namespaced_secret, self.namespace, label_selector=selector)
        found = [Container(id=f"job/{job.metadata.name}", labels=job.metadata.labels or {}) for job in jobs.items]
        found += [
            Container(id=f"pod/{pod.metadata.name}", labels=pod.metadata.labels or {})
            for pod in pods.items
            if not any(owner.kind == "Job" for owner in pod.metadata.owner_references or [])
        ]
        found += [
            Container(id=f"secret/{secret.metadata.name}", labels=secret.metadata.labels or {})
            for secret in secrets.items
            if not secret.metadata.owner_references
        ]
        return found

    # -- images ---------------------------------------------------------------------------

    def image(self, ref: str) -> Image:
        """The reference as given: the cluster's nodes pull it (per imagePullPolicy), the runner
        cannot inspect them. The digest is known only when the reference pins one (…@sha256:…)."""
        if not ref:
            raise EngineError("the work names no image")
        digest = ref.rsplit("@", 1)[1] if "@sha256:" in ref else ""
        return Image(id=digest.removeprefix("sha256:"), digest=digest)

    def pull(self, ref: str) -> Image:
        return self.image(ref)
