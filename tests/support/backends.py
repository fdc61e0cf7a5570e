"""In-process backends for tests: real implementations of workloads.backends' interfaces
that keep what they were handed, as a runtime would, so tests can look at it."""

from __future__ import annotations


class RecordingJobBackend:
    def __init__(self):
        self.submitted: list[str] = []
        self.cancelled: list[str] = []

    def submit(self, job):
        self.submitted.append(job.job_id)

    def cancel(self, job):
        self.cancelled.append(job.job_id)


class RecordingSandboxBackend:
    def __init__(self):
        self.running: dict[str, str] = {}  # sandbox id → agent key plaintext
        self.deleted: list[str] = []

    def create(self, sandbox, *, agent_key):
        self.running[sandbox.sandbox_id] = agent_key

    def delete(self, sandbox):
        self.running.pop(sandbox.sandbox_id, None)
        self.deleted.append(sandbox.sandbox_id)


class RecordingBuildBackend:
    def __init__(self):
        self.builds: list[str] = []

    def build(self, environment):
        self.builds.append(environment.environment_id)
