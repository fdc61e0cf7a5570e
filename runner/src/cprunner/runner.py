"""The runner loop: N slots, each leasing one piece of work at a time and running it.

Per piece of work: the container (labelled with the work and the lease), a heartbeat thread
(renews the lease, learns of cancellation), for jobs a log pump (AppendLogs by byte offset),
and the slot's own thread, which waits for whichever comes first: the container's exit, a
cancellation, the timeout, the loss of the lease, or the runner's shutdown deadline.

Every call to the control plane retries transient failures with backoff, so a control plane
that restarts mid-job loses nothing. `failed_precondition` from a lease call means the lease is
gone (expired and given to another runner, or the key revoked): the container is killed at once.
"""

from __future__ import annotations

import hashlib
import logging
import random
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from cpsdk import errors
from cpsdk._gen.containers.runtime.v1 import runner_pb2 as pb
from cpsdk.runtime import RunnerClient

from . import __version__
from .engines import ContainerSpec, Engine, EngineError, EngineUnavailable, ExitStatus, Image, ImageNotFound, Limits

log = logging.getLogger("cprunner")

# Failures worth trying again: the control plane is restarting, overloaded or unreachable.
TRANSIENT = (
    errors.Unavailable,
    errors.DeadlineExceeded,
    errors.Aborted,
    errors.ResourceExhausted,
    errors.Internal,
    errors.Unknown,
)
# The key is revoked or not a runner key: leases held with it are over.
REFUSED = (errors.Unauthenticated, errors.PermissionDenied)
LOG_CHUNK = 1 << 20
MAX_BUFFERED = 8 * LOG_CHUNK  # output held in memory before the reader waits for AppendLogs
MAX_REASON = 1000  # FinishWorkRequest.reason's limit; engine messages can be longer  # AppendLogs' limit per call
TICK = 0.2  # seconds: how often the main thread looks up from waiting (signals run then)
FINISH_RETRY_SECONDS = 900  # past this the lease has long expired: the control plane decides
KIND_NAMES = {pb.WORK_KIND_JOB: "job", pb.WORK_KIND_SANDBOX: "sandbox", pb.WORK_KIND_BUILD: "build"}
KINDS_BY_NAME = {name: kind for kind, name in KIND_NAMES.items()}

# Labels on every container a runner starts.
LABEL_RUNNER = "cp.runner"
LABEL_WORK = "cp.work-id"
LABEL_KIND = "cp.kind"
LABEL_ATTEMPT = "cp.attempt"
LABEL_LEASE = "cp.lease"  # a digest of the lease token, never the token
LABEL_NAMESPACE = "cp.namespace"


class LeaseLost(Exception):
    """failed_precondition from a lease call: the work is no longer this runner's."""


@dataclass
class Config:
    url: str
    key: str
    engine: Engine
    name: str = field(default_factory=socket.gethostname)
    concurrency: int = 1
    kinds: tuple[int, ...] = ()  # empty: every kind
    container_url: str = ""  # the API's URL as seen from inside containers (sandboxes); "" = url
    network: str = ""  # the engine's network for containers; "host" shares the runner's
    poll_seconds: int = 20  # AcquireWork's long poll
    shutdown_grace: float = 30.0  # on SIGTERM: how long running work may go on before it is released
    stop_grace: float = 10.0  # SIGTERM → SIGKILL when stopping for a timeout or a release
    request_timeout: float = 30.0


@dataclass
class Outcome:
    result: int
    exit_code: int = 0
    signal: int = 0
    reason: str = ""
    image_digest: str = ""


def resolve_image(engine: Engine, ref: str, policy: str) -> Image:
    """The image per pull policy: "always" pulls, "never" takes the local one, "missing" (the
    default, as `podman run`) pulls only when it is absent. EngineError / ImageNotFound."""
    policy = policy or "missing"
    if policy == "always":
        return engine.pull(ref)
    if policy == "never":
        return engine.image(ref)
    if policy == "missing":
        try:
            return engine.image(ref)
        except ImageNotFound:
            return engine.pull(ref)
    raise EngineError(f"unknown pull policy {policy!r}: always, missing or never")


def lease_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()[:16]


def _seconds(duration, default: float) -> float:
    value = duration.seconds + duration.nanos / 1e9
    return value if value > 0 else default


class Runner:
    def __init__(self, config: Config, client: RunnerClient | None = None):
        self.config = config
        self.engine = config.engine
        self.client = client or RunnerClient(config.url, config.key, timeout=config.request_timeout)
        self.stopping = threading.Event()  # no new work
        self.releasing = threading.Event()  # hand back running work now
        self.held: dict[str, WorkRun] = {}
        self.refused = False  # the control plane refused the key: exit 1
        self.engine_ok = threading.Event()  # cleared while the engine does not answer: no new work
        self.engine_ok.set()
        self._held_lock = threading.Lock()
        self.version = f"cprunner {__version__} {self.engine.version()} on {socket.gethostname()}"[:200]

    # -- control-plane calls -------------------------------------------------------------

    def call(self, what: str, fn: Callable, *, give_up: Callable[[], bool] = lambda: False, max_seconds=None):
        """fn(), retried with exponential backoff and jitter while it fails transiently.

        Raises LeaseLost on failed_precondition, the last transient error once `give_up()`
        holds or `max_seconds` passed, and any other error at once.
        """
        delay, started = 0.1, time.monotonic()
        while True:
            try:
                return fn()
            except errors.FailedPrecondition as exc:
                raise LeaseLost(exc.message) from None
            except TRANSIENT as exc:
                if give_up() or (max_seconds is not None and time.monotonic() - started > max_seconds):
                    raise
                log.warning("%s failed (%s); retrying in %.1f s", what, exc, delay)
                time.sleep(delay)
                delay = min(5.0, delay * 2) * random.uniform(0.8, 1.2)  # noqa: S311 - jitter

    # -- lifecycle -----------------------------------------------------------------------

    def run(self) -> int:
        """Runs until shutdown() (and the release of running work); returns the exit status."""
        self.sweep()
        log.info(
            "runner %s started: %s, %d slot(s), kinds %s",
            self.config.name,
            self.version,
            self.config.concurrency,
            ",".join(KIND_NAMES[k] for k in self.config.kinds) or "all",
        )
        slots = [
            threading.Thread(target=self._slot, name=f"slot-{n}", daemon=True) for n in range(self.config.concurrency)
        ]
        for slot in slots:
            slot.start()
        # The main thread waits in short steps: a signal delivered to another thread runs its
        # Python handler only when the main thread next runs, which a lock wait without a
        # timeout would put off for ever.
        while not self.stopping.wait(TICK):
            pass
        log.info("shutting down: no new work; running work has %.0f s to finish", self.config.shutdown_grace)
        self._join(slots, time.monotonic() + self.config.shutdown_grace, until=self.releasing)
        self.release_all()
        # An AcquireWork long poll in flight ends within poll_seconds; work it brings is released.
        self._join(slots, time.monotonic() + self.config.poll_seconds + self.config.request_timeout)
        self.client.close()
        log.info("runner %s stopped", self.config.name)
        return 1 if self.refused else 0

    @staticmethod
    def _join(threads, deadline: float, until: threading.Event | None = None) -> None:
        """Joins the threads until the deadline (or `until` is set), in TICK steps."""
        while any(t.is_alive() for t in threads) and time.monotonic() < deadline:
            if until is not None and until.is_set():
                return
            next(t for t in threads if t.is_alive()).join(TICK)

    def shutdown(self) -> None:
        """Stop taking work; running work may finish within shutdown_grace. Twice: release now."""
        if self.stopping.is_set():
            self.release_all()
        self.stopping.set()

    def release_all(self) -> None:
        self.releasing.set()
        with self._held_lock:
            runs = list(self.held.values())
        for run in runs:
            run.changed.set()

    def sweep(self) -> None:
        """Removes this runner's containers whose work it no longer holds (orphans)."""
        try:
            containers = self.engine.list({LABEL_RUNNER: self.config.name})
        except EngineError as exc:
            log.error("could not look for orphan containers: %s", exc)
            return
        for container in containers:
            with self._held_lock:
                run = self.held.get(container.labels.get(LABEL_WORK, ""))
            if run is None or run.container_id not in (None, container.id):
                log.info("removing orphan container %s (%s)", container.id[:12], container.labels.get(LABEL_WORK))
                try:
                    self.engine.remove(container.id)
                except EngineError as exc:
                    log.warning("could not remove orphan %s: %s", container.id[:12], exc)

    # -- slots ---------------------------------------------------------------------------

    def engine_down(self, why: str) -> None:
        if self.engine_ok.is_set():
            log.error("%s; taking no work until it answers", why)
        self.engine_ok.clear()

    def _await_engine(self) -> None:
        while not self.engine_ok.is_set() and not self.stopping.is_set():
            try:
                self.engine.version()
            except EngineError:
                self.stopping.wait(5)
                continue
            if not self.engine_ok.is_set():
                log.info("the engine answers again")
                self.engine_ok.set()
                self.sweep()  # what it lost track of meanwhile

    def _slot(self) -> None:
        while not self.stopping.is_set():
            self._await_engine()
            if self.stopping.is_set():
                return
            try:
                answer = self.call(
                    "AcquireWork",
                    lambda: self.client.acquire_work(
                        self.config.kinds, wait_seconds=self.config.poll_seconds, runner_version=self.version
                    ),
                    give_up=self.stopping.is_set,
                )
            except REFUSED as exc:
                # The key was revoked (or is not a runner key): running on would only fail again.
                log.error("the control plane refused this runner's key (%s); stopping", exc)
                self.refused = True
                self.shutdown()
                return
            except (errors.Error, LeaseLost) as exc:
                if self.stopping.is_set():
                    return
                log.error("AcquireWork failed: %s; trying again in 5 s", exc)
                self.stopping.wait(5)
                continue
            if answer.HasField("work"):
                self._hold(answer.work)
            else:
                self.stopping.wait(_seconds(answer.retry_after, 0))

    def _hold(self, work: pb.Work) -> None:
        run = WorkRun(self, work)
        with self._held_lock:
            self.held[work.work_id] = run
        try:
            run.run()
        except Exception as exc:  # a bug here must not leave a container running, nor the slot dead
            log.exception("work %s: the runner failed", work.work_id)
            if run.container_id is not None:
                run._remove()
            if not run.lease_lost.is_set():
                run._finish(Outcome(pb.RESULT_ERROR, reason=f"the runner failed: {type(exc).__name__}"))
        finally:
            with self._held_lock:
                self.held.pop(work.work_id, None)
        if run.lease_lost.is_set():
            self.sweep()


class WorkRun:
    """One acquired piece of work, from acquisition to FinishWork."""

    def __init__(self, runner: Runner, work: pb.Work):
        self.runner = runner
        self.engine = runner.engine
        self.work = work
        self.kind = KIND_NAMES.get(work.kind, "job")
        self.container_id: str | None = None
        self.running = False
        self.changed = threading.Event()  # something the slot waits for happened
        self.exited = threading.Event()
        self.status: ExitStatus | None = None
        self.wait_error: EngineError | None = None
        self.cancel = threading.Event()
        self.lease_lost = threading.Event()
        self.done = threading.Event()
        self.grace = runner.config.stop_grace
        self._beat_now = threading.Event()

    # -- the calls, with this work's lease --------------------------------------------------

    def _lease_call(self, what: str, fn, *, give_up=lambda: False, **kwargs):
        def stop_trying() -> bool:
            return self.lease_lost.is_set() or give_up()

        try:
            return self.runner.call(f"{what} {self.work.work_id}", fn, give_up=stop_trying, **kwargs)
        except LeaseLost as exc:
            self.lose_lease(str(exc))
            raise
        except REFUSED as exc:  # revoking a runner's key ends its leases
            self.lose_lease(str(exc))
            raise LeaseLost(str(exc)) from None

    def lose_lease(self, why: str) -> None:
        if self.lease_lost.is_set():
            return
        log.warning("work %s: lease lost (%s); killing its container", self.work.work_id, why)
        self.lease_lost.set()
        self.changed.set()
        if self.container_id is not None:
            self._remove()

    # -- the work ---------------------------------------------------------------------------

    def run(self) -> None:
        work = self.work
        log.info(
            "work %s (%s, attempt %d, namespace %s) acquired", work.work_id, self.kind, work.attempt, work.namespace
        )
        beat = threading.Thread(target=self._heartbeats, name=f"heartbeat-{work.work_id}", daemon=True)
        beat.start()
        try:
            if self.runner.releasing.is_set() or self.runner.stopping.is_set():
                outcome = Outcome(pb.RESULT_RELEASED, reason="the runner is shutting down")
            elif work.kind == pb.WORK_KIND_BUILD:
                outcome = self._build()
            else:
                outcome = self._run_container()
            if outcome is not None and not self.lease_lost.is_set():
                self._finish(outcome)
        finally:
            self.done.set()
            self._beat_now.set()
            beat.join()

    def _finish(self, outcome: Outcome) -> None:
        work = self.work
        try:
            self._lease_call(
                "FinishWork",
                lambda: self.runner.client.finish_work(
                    work.work_id,
                    work.lease_token,
                    outcome.result,
                    exit_code=outcome.exit_code,
                    signal=outcome.signal,
                    reason=outcome.reason[:MAX_REASON],
                    image_digest=outcome.image_digest,
                ),
                max_seconds=FINISH_RETRY_SECONDS,
            )
        except (LeaseLost, errors.Error) as exc:
            log.error("work %s: FinishWork failed: %s", work.work_id, exc)
            return
        log.info(
            "work %s finished: %s exit %d%s",
            work.work_id,
            pb.Result.Name(outcome.result),
            outcome.exit_code,
            f" ({outcome.reason})" if outcome.reason else "",
        )

    def _engine_failed(self, exc: EngineError) -> Outcome:
        """An engine that does not answer hands the work back (another runner may run it)."""
        if isinstance(exc, EngineUnavailable):
            self.runner.engine_down(str(exc))
            return Outcome(pb.RESULT_RELEASED, reason=str(exc))
        return Outcome(pb.RESULT_ERROR, reason=str(exc))

    def _build(self) -> Outcome:
        try:
            image = resolve_image(self.engine, self.work.image, self.work.pull_policy)
        except EngineError as exc:
            return self._engine_failed(exc)
        # An engine that cannot inspect images (kubernetes) knows a digest only from the reference.
        digest = image.digest or (f"sha256:{image.id}" if image.id else "")
        return Outcome(pb.RESULT_BUILT, image_digest=digest)

    def _spec(self) -> ContainerSpec:
        work, config = self.work, self.runner.config
        env = dict(work.env)
        if work.kind == pb.WORK_KIND_SANDBOX:
            env.update(
                CP_URL=config.container_url or config.url, CP_AGENT_KEY=work.agent_key, CP_NAMESPACE=work.namespace
            )
            if work.workspace_id:
                env["CP_WORKSPACE_ID"] = work.workspace_id
        lease = lease_digest(work.lease_token)
        return ContainerSpec(
            name=f"cp-{work.work_id}-{work.attempt}-{lease[:8]}",
            image=work.image,
            command=list(work.command),
            env=env,
            labels={
                LABEL_RUNNER: config.name,
                LABEL_WORK: work.work_id,
                LABEL_KIND: self.kind,
                LABEL_ATTEMPT: str(work.attempt),
                LABEL_LEASE: lease,
                LABEL_NAMESPACE: work.namespace,
            },
            limits=Limits(work.resources.memory_bytes, work.resources.milli_cpus, work.resources.max_pids),
            network=config.network,
            kind="sandbox" if work.kind == pb.WORK_KIND_SANDBOX else "job",
            timeout_seconds=work.timeout_seconds,
            pull_policy=work.pull_policy,
        )

    def _run_container(self) -> Outcome | None:
        work = self.work
        try:
            if self.engine.images:
                resolve_image(self.engine, work.image, work.pull_policy)
            self.container_id = self.engine.start(self._spec())
        except EngineError as exc:
            return self._engine_failed(exc)
        if self.lease_lost.is_set():  # lost while starting: lose_lease had no container to kill
            self._remove()
            return None
        self.running = True
        self._beat_now.set()  # a sandbox is RUNNING from its first heartbeat with running=true
        threading.Thread(target=self._wait, name=f"wait-{work.work_id}", daemon=True).start()
        pump = LogPump(self) if work.kind == pb.WORK_KIND_JOB else None
        deadline = time.monotonic() + work.timeout_seconds if work.timeout_seconds > 0 else None
        outcome = self._supervise(deadline)
        if outcome is None:  # the lease is lost: lose_lease removed the container
            return None
        if pump is not None:
            pump.drain()
        self._remove()
        return None if self.lease_lost.is_set() else outcome

    def _remove(self) -> None:
        try:
            self.engine.remove(self.container_id)
        except EngineError as exc:  # the sweep removes it once the engine answers (or at restart)
            log.error("work %s: %s", self.work.work_id, exc)

    def _wait(self) -> None:
        try:
            self.status = self.engine.wait(self.container_id)
        except Exception as exc:  # the slot must learn that waiting is over, whatever happened
            log.warning("work %s: waiting for its container failed: %s", self.work.work_id, exc)
            self.wait_error = exc if isinstance(exc, EngineError) else EngineError(str(exc))
        self.exited.set()
        self.changed.set()

    def _supervise(self, deadline: float | None) -> Outcome | None:
        """Waits for the first of: exit, lost lease, cancellation, timeout, release."""
        sandbox = self.work.kind == pb.WORK_KIND_SANDBOX
        while True:
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            self.changed.wait(timeout)
            self.changed.clear()
            if self.lease_lost.is_set():
                return None
            if self.exited.is_set() and self.status is None:
                outcome = self._engine_failed(self.wait_error or EngineError("the engine lost the container"))
                outcome.reason = f"lost track of the container: {outcome.reason}"
                return outcome
            if self.exited.is_set():
                status = self.status
                if status.error:
                    return Outcome(pb.RESULT_ERROR, status.exit_code, status.signal, status.error)
                if sandbox:
                    reason = f"the sandbox's container exited with code {status.exit_code}"
                    return Outcome(pb.RESULT_STOPPED, status.exit_code, status.signal, reason)
                return Outcome(pb.RESULT_EXITED, status.exit_code, status.signal)
            if self.cancel.is_set():
                status = self._stop(self.grace)
                result = pb.RESULT_STOPPED if sandbox else pb.RESULT_CANCELLED
                return Outcome(result, status.exit_code, status.signal, "stopped on request")
            if deadline is not None and time.monotonic() >= deadline:
                status = self._stop(self.runner.config.stop_grace)
                reason = f"timed out after {self.work.timeout_seconds} s (timeout_seconds)"
                return Outcome(pb.RESULT_TIMED_OUT, status.exit_code, status.signal, reason)
            if self.runner.releasing.is_set():
                status = self._stop(self.runner.config.stop_grace)
                return Outcome(pb.RESULT_RELEASED, status.exit_code, status.signal, "the runner shut down")

    def _stop(self, grace: float) -> ExitStatus:
        log.info("work %s: stopping its container (grace %.0f s)", self.work.work_id, grace)
        try:
            self.engine.stop(self.container_id, grace)
        except EngineError as exc:
            log.warning("work %s: %s; killing it", self.work.work_id, exc)
            self._remove()
        self.exited.wait(grace + 30)
        return self.status or ExitStatus(exit_code=-1)

    # -- heartbeats -------------------------------------------------------------------------

    def _heartbeats(self) -> None:
        work = self.work
        interval = _seconds(work.heartbeat_interval, 10.0)
        while True:
            self._beat_now.wait(interval)
            self._beat_now.clear()
            if self.done.is_set() or self.lease_lost.is_set():
                return
            try:
                answer = self._lease_call(
                    "Heartbeat",
                    lambda: self.runner.client.heartbeat(work.work_id, work.lease_token, running=self.running),
                    give_up=self.done.is_set,
                )
            except LeaseLost:
                return
            except errors.Error as exc:
                log.warning("work %s: Heartbeat failed: %s", work.work_id, exc)
                continue
            if answer.cancel_requested and not self.cancel.is_set():
                log.info("work %s: cancellation requested", work.work_id)
                self.grace = answer.grace_seconds or self.runner.config.stop_grace
                self.cancel.set()
                self.changed.set()


class LogPump:
    """The container's output to AppendLogs, in order, by byte offset from Work.log_offset.

    One thread follows the engine's output into a buffer; another sends what has gathered (up
    to 1 MiB a call), retrying the same chunk at the same offset until it is stored. Once the
    container has exited, `drain` takes the rest from the whole log rather than waiting for the
    follow stream to notice the exit (podman's ends tens of milliseconds later, and has been
    seen to end before it sent everything).
    """

    def __init__(self, run: WorkRun):
        self.run = run
        self.offset = run.work.log_offset
        self.buffer = bytearray()
        self.followed = 0  # bytes the follow stream delivered into the buffer
        self.caught_up = False  # drain took over: the follow stream's chunks are dropped
        self.eof = False  # nothing more will be buffered
        self.stopped = False  # the sender is done
        self.cond = threading.Condition()
        work_id = run.work.work_id
        self.reader = threading.Thread(target=self._follow, name=f"logs-{work_id}", daemon=True)
        self.sender = threading.Thread(target=self._send, name=f"append-{work_id}", daemon=True)
        self.reader.start()
        self.sender.start()

    def _put(self, chunk: bytes, *, following: bool) -> bool:
        """Buffers the chunk for the sender; False once it is not wanted any more."""
        with self.cond:
            # Back-pressure while AppendLogs cannot keep up (the control plane is down): the
            # engine keeps the output meanwhile (podman on disk, the process engine in a file).
            unwanted = lambda: self.stopped or (following and self.caught_up)  # noqa: E731
            self.cond.wait_for(lambda: len(self.buffer) < MAX_BUFFERED or unwanted())
            if unwanted():
                return False
            self.buffer += chunk
            if following:
                self.followed += len(chunk)
            self.cond.notify_all()
            return True

    def _follow(self) -> None:
        engine, container_id = self.run.engine, self.run.container_id
        try:
            for chunk in engine.logs(container_id):
                if not self._put(chunk, following=True):
                    return
        except Exception as exc:  # drain reads what it missed from the whole log
            log.warning("work %s: following its output failed: %s", self.run.work.work_id, exc)

    def _catch_up(self) -> None:
        """After the exit: whatever the follow stream has not delivered, from the whole log."""
        with self.cond:
            self.caught_up = True
            self.cond.notify_all()
            have = self.followed
        engine, container_id = self.run.engine, self.run.container_id
        try:
            seen = 0
            for chunk in engine.logs(container_id, follow=False):
                if seen + len(chunk) > have and not self._put(chunk[max(0, have - seen) :], following=False):
                    return
                seen += len(chunk)
        except Exception as exc:
            log.warning("work %s: reading its output failed: %s", self.run.work.work_id, exc)
        finally:
            with self.cond:
                self.eof = True
                self.cond.notify_all()

    def _send(self) -> None:
        try:
            self._send_all()
        finally:
            with self.cond:
                self.stopped = True
                self.cond.notify_all()

    def _send_all(self) -> None:
        run = self.run
        work = run.work
        while not run.lease_lost.is_set():
            with self.cond:
                self.cond.wait_for(lambda: self.buffer or self.eof)
                if not self.buffer:
                    return
                data = bytes(self.buffer[:LOG_CHUNK])
            try:
                run._lease_call(
                    "AppendLogs",
                    lambda data=data: run.runner.client.append_logs(work.work_id, work.lease_token, self.offset, data),
                )
            except LeaseLost:
                return
            except errors.Error as exc:
                log.error("work %s: AppendLogs failed, the rest of its output is dropped: %s", work.work_id, exc)
                return
            self.offset += len(data)
            with self.cond:
                del self.buffer[: len(data)]
                self.cond.notify_all()

    def drain(self) -> None:
        """Once the container has exited: returns when every byte of output is stored (or the
        lease is lost)."""
        self._catch_up()
        while self.sender.is_alive() and not self.run.lease_lost.is_set():
            self.sender.join(0.5)
