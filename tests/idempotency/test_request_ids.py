"""requestId (AIP-155) on the six creating methods: retries return the original, never a duplicate."""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connections
from django.test import Client
from django.utils import timezone

from apikeys.models import ApiKey
from controlplane.auth import Role
from idempotency.models import RequestRecord
from tests.support.world import path
from workloads.models import EgressGrant, Environment, Job, Sandbox, Workspace

pytestmark = pytest.mark.django_db

RID = "4f5b0a62-7c1e-4d0e-9a0e-2f1d3c4b5a69"

# method, request body, response field, public id field, model
CREATES = [
    ("JobService/RunJob", {"namespace": "team-a", "image": "alpine"}, "job", "jobId", Job),
    ("SandboxService/CreateSandbox", {"namespace": "team-a", "image": "alpine"}, "sandbox", "sandboxId", Sandbox),
    ("WorkspaceService/CreateWorkspace", {"namespace": "team-a", "name": "ws"}, "workspace", "workspaceId", Workspace),
    (
        "EnvironmentService/RegisterEnvironment",
        {"namespace": "team-a", "name": "env", "image": "alpine"},
        "environment",
        "environmentId",
        Environment,
    ),
    (
        "EgressService/GrantEgress",
        {"namespace": "team-a", "target": "api.example.com"},
        "grant",
        "grantId",
        EgressGrant,
    ),
]


@pytest.fixture
def operator(namespace, make_key):
    return make_key("team-a", Role.OPERATOR)


@pytest.mark.parametrize(("method", "body", "field", "id_field", "model"), CREATES, ids=[c[0] for c in CREATES])
def test_a_retry_returns_the_original_and_creates_nothing(
    rpc, capabilities, operator, method, body, field, id_field, model
):
    first = rpc(path(method), {**body, "requestId": RID}, token=operator)
    retry = rpc(path(method), {**body, "requestId": RID}, token=operator)
    assert first.status == retry.status == 200, (first, retry)
    assert retry.body[field][id_field] == first.body[field][id_field]
    assert model.objects.filter(namespace__name="team-a").count() == 1
    # Without a requestId nothing is remembered: every call is new (here: refused as a duplicate
    # name or target, or a second job).
    assert rpc(path(method), body, token=operator).body != first.body


def test_the_same_id_with_a_different_request_is_invalid_argument(rpc, capabilities, operator):
    assert rpc(path("JobService/RunJob"), {"namespace": "team-a", "image": "alpine", "requestId": RID}, token=operator)
    other = rpc(
        path("JobService/RunJob"), {"namespace": "team-a", "image": "busybox", "requestId": RID}, token=operator
    )
    assert other.code == "invalid_argument" and other.body["message"].startswith("requestId:")
    assert Job.objects.count() == 1


def test_ids_are_per_principal_and_per_method(rpc, capabilities, operator, make_key):
    body = {"namespace": "team-a", "image": "alpine", "requestId": RID}
    other_operator = make_key("team-a", Role.OPERATOR)
    mine = rpc(path("JobService/RunJob"), body, token=operator).body["job"]["jobId"]
    theirs = rpc(path("JobService/RunJob"), body, token=other_operator).body["job"]["jobId"]
    assert mine != theirs
    sandbox = rpc(path("SandboxService/CreateSandbox"), body, token=operator)
    assert sandbox.status == 200 and Job.objects.count() == 2


def test_request_id_limits_name_the_field(rpc, capabilities, operator):
    for bad, limit in (("x" * 129, "at most 128 characters"), ("has space", "printable ASCII")):
        result = rpc(
            path("JobService/RunJob"), {"namespace": "team-a", "image": "alpine", "requestId": bad}, token=operator
        )
        assert result.code == "invalid_argument" and limit in result.body["message"]
        assert result.body["message"].startswith("requestId:")
    assert Job.objects.count() == 0 and RequestRecord.objects.count() == 0


def test_a_failed_create_keeps_no_request_id(rpc, capabilities, operator):
    """A call that fails (here: an invalid image) records nothing, so its retry runs afresh."""
    bad = rpc(
        path("JobService/RunJob"), {"namespace": "team-a", "image": "NOT AN IMAGE", "requestId": RID}, token=operator
    )
    assert bad.code == "invalid_argument"
    assert RequestRecord.objects.count() == 0


def test_issue_api_key_retry_names_the_key_and_issues_no_second_one(rpc, admin_key):
    body = {"namespace": "team-a", "name": "ci", "role": "ROLE_VIEWER", "requestId": RID}
    first = rpc("containers.api.v1.NamespaceService/IssueApiKey", body, token=admin_key)
    assert first.status == 200 and first.body["plaintext"].startswith("cpk_")
    retry = rpc("containers.api.v1.NamespaceService/IssueApiKey", body, token=admin_key)
    assert retry.code == "already_exists" and first.body["key"]["keyId"] in retry.body["message"]
    assert first.body["plaintext"] not in retry.raw.decode()
    assert ApiKey.objects.filter(name="ci").count() == 1


def test_purge_request_ids_deletes_only_records_past_the_window(rpc, capabilities, operator, settings):
    settings.REQUEST_ID_RETENTION_HOURS = 24
    rpc(path("JobService/RunJob"), {"namespace": "team-a", "image": "alpine", "requestId": "old"}, token=operator)
    rpc(path("JobService/RunJob"), {"namespace": "team-a", "image": "alpine", "requestId": "new"}, token=operator)
    RequestRecord.objects.filter(request_id="old").update(created_at=timezone.now() - timedelta(hours=25))
    call_command("purge_request_ids", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert list(RequestRecord.objects.values_list("request_id", flat=True)) == ["new"]


@pytest.mark.django_db(transaction=True)
def test_concurrent_retries_create_exactly_one_job(namespace, make_key):
    """N threads (own connections) send RunJob with one requestId at once: one job, N equal answers.

    On PostgreSQL the calls overlap and meet at the unique constraint; on SQLite they
    serialise on the write lock. Either way every answer names the same job.
    """
    n = 10
    operator = make_key("team-a", Role.OPERATOR)
    start = threading.Barrier(n)
    answers: list[tuple[int, str]] = []

    def run():
        try:
            start.wait()
            response = Client().post(
                "/" + path("JobService/RunJob"),
                data=json.dumps({"namespace": "team-a", "image": "alpine", "requestId": RID}),
                content_type="application/json",
                HTTP_AUTHORIZATION=f"Bearer {operator}",
            )
            body = json.loads(response.content)
            answers.append((response.status_code, body.get("job", {}).get("jobId", body.get("code"))))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run) for _ in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(answers) == n and {status for status, _ in answers} == {200}, answers
    assert len({job_id for _, job_id in answers}) == 1
    assert Job.objects.count() == 1 and RequestRecord.objects.count() == 1
