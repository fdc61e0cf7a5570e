"""Quotas: creating past one is resource_exhausted naming it; concurrent creates cannot overshoot."""

import json
import threading

import pytest
from django.db import connections
from django.test import Client

from controlplane.auth import Role
from namespaces.services import update_namespace
from tests.support.world import SYSTEM, path
from workloads.models import Sandbox

# quota → (method, body making one more, fixed fields), JSON name in the error
CREATES = {
    "max_sandboxes": ("SandboxService/CreateSandbox", lambda i: {"image": "python:3.12"}, "maxSandboxes"),
    "max_running_jobs": ("JobService/RunJob", lambda i: {"image": "alpine:3"}, "maxRunningJobs"),
    "max_workspaces": ("WorkspaceService/CreateWorkspace", lambda i: {"name": f"ws-{i}"}, "maxWorkspaces"),
    "max_environments": (
        "EnvironmentService/RegisterEnvironment",
        lambda i: {"name": f"env-{i}", "image": "node:22"},
        "maxEnvironments",
    ),
    "max_egress_grants": ("EgressService/GrantEgress", lambda i: {"target": f"host{i}.example.com"}, "maxEgressGrants"),
}


@pytest.mark.django_db
@pytest.mark.parametrize("quota", sorted(CREATES))
def test_creating_past_a_quota_is_resource_exhausted(rpc, capabilities, namespace, make_key, quota):
    method, body, json_name = CREATES[quota]
    update_namespace(actor=SYSTEM, name="team-a", quotas={quota: 2})
    operator = make_key("team-a", Role.OPERATOR)
    for i in range(2):
        assert rpc(path(method), {"namespace": "team-a", **body(i)}, token=operator).status == 200
    result = rpc(path(method), {"namespace": "team-a", **body(2)}, token=operator)
    assert (result.status, result.code) == (429, "resource_exhausted"), result
    assert json_name in result.body["message"]
    violation = result.body["details"][0]["debug"]["violations"][0]
    assert violation["subject"] == f"namespace:team-a/{json_name}"


@pytest.mark.django_db
def test_finished_jobs_do_not_count_against_running_jobs(rpc, capabilities, namespace, make_key):
    update_namespace(actor=SYSTEM, name="team-a", quotas={"max_running_jobs": 1})
    operator = make_key("team-a", Role.OPERATOR)
    job = rpc(path("JobService/RunJob"), {"namespace": "team-a", "image": "alpine"}, token=operator).body["job"]
    assert rpc(path("JobService/RunJob"), {"namespace": "team-a", "image": "alpine"}, token=operator).code
    rpc(path("JobService/CancelJob"), {"jobId": job["jobId"]}, token=operator)
    assert rpc(path("JobService/RunJob"), {"namespace": "team-a", "image": "alpine"}, token=operator).status == 200


@pytest.mark.django_db
def test_deleting_frees_quota(rpc, capabilities, namespace, make_key):
    update_namespace(actor=SYSTEM, name="team-a", quotas={"max_sandboxes": 1})
    operator = make_key("team-a", Role.OPERATOR)
    body = {"namespace": "team-a", "image": "python:3.12"}
    sandbox = rpc(path("SandboxService/CreateSandbox"), body, token=operator).body["sandbox"]
    assert rpc(path("SandboxService/CreateSandbox"), body, token=operator).code == "resource_exhausted"
    rpc(path("SandboxService/DeleteSandbox"), {"sandboxId": sandbox["sandboxId"]}, token=operator)
    assert rpc(path("SandboxService/CreateSandbox"), body, token=operator).status == 200


@pytest.mark.django_db(transaction=True)
def test_parallel_creates_stop_exactly_at_the_quota(capabilities, namespace, make_key, db_vendor):
    """N threads, each its own database connection, call CreateSandbox at once against a quota of K.

    On PostgreSQL the requests really overlap and meet at the namespace row lock; on SQLite
    they serialise on the database write lock. Either way exactly K succeed.
    """
    n, k = 12, 5
    update_namespace(actor=SYSTEM, name="team-a", quotas={"max_sandboxes": k})
    operator = make_key("team-a", Role.OPERATOR)
    start = threading.Barrier(n)
    outcomes: list[str] = []

    def create():
        try:
            start.wait()
            response = Client().post(
                "/" + path("SandboxService/CreateSandbox"),
                data=json.dumps({"namespace": "team-a", "image": "python:3.12"}),
                content_type="application/json",
                HTTP_AUTHORIZATION=f"Bearer {operator}",
            )
            outcomes.append("ok" if response.status_code == 200 else json.loads(response.content)["code"])
        finally:
            connections.close_all()

    threads = [threading.Thread(target=create) for _ in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(outcomes) == ["ok"] * k + ["resource_exhausted"] * (n - k)
    assert Sandbox.objects.filter(namespace__name="team-a").count() == k
    assert Sandbox.objects.filter(namespace__name="team-a", state=Sandbox.State.PENDING).count() == k
