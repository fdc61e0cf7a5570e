"""RunnerAdminService: issue, list (with the work each holds and keyset pages), revoke."""

from __future__ import annotations

import pytest

from apikeys.models import ApiKey
from apikeys.tokens import digest
from audit.models import AuditEvent
from controlplane.auth import Kind, Principal
from runners.models import Runner
from workloads.models import Job
from workloads.services import jobs, leases

from .conftest import SYSTEM

pytestmark = pytest.mark.django_db
SERVICE = "containers.api.v1.RunnerAdminService/"


def test_issue_list_and_revoke(rpc, admin_key, namespace):
    issued = rpc(SERVICE + "IssueRunnerKey", {"name": "host-7", "namespaces": ["team-a"]}, token=admin_key).body
    runner, plaintext = issued["runner"], issued["plaintext"]
    assert plaintext.startswith("cpk_") and runner["runnerId"].startswith("rnr_")
    assert (runner["name"], runner["namespaces"], runner["state"]) == ("host-7", ["team-a"], "RUNNER_STATE_ACTIVE")
    key = ApiKey.objects.get(key_id=runner["keyId"])
    assert key.kind == ApiKey.Kind.RUNNER and key.digest == digest(plaintext) and key.namespace is None
    record = Runner.objects.get(runner_id=runner["runnerId"])
    job = jobs.run_job(actor=SYSTEM, namespace="team-a", image="busybox")
    leases.claim(Principal(kind=Kind.RUNNER, key_id=key.key_id), record, leases.KINDS)
    listed = rpc(SERVICE + "ListRunners", {"pageSize": 1}, token=admin_key).body
    assert [r["runnerId"] for r in listed["runners"]] == [runner["runnerId"]] and listed["runners"][0]["workHeld"] == 1
    revoked = rpc(SERVICE + "RevokeRunner", {"runnerId": runner["runnerId"]}, token=admin_key).body["runner"]
    assert revoked["state"] == "RUNNER_STATE_REVOKED" and "workHeld" not in revoked
    assert Job.objects.get(pk=job.pk).state == Job.State.QUEUED
    assert AuditEvent.objects.filter(action="runner.revoke", target=f"runner:{runner['runnerId']}").exists()
    assert rpc(SERVICE + "RevokeRunner", {"runnerId": runner["runnerId"]}, token=admin_key).code is None  # again: OK


def test_issue_refuses_unknown_namespaces_and_lists_page_by_page(rpc, admin_key, namespace):
    refused = rpc(SERVICE + "IssueRunnerKey", {"name": "x", "namespaces": ["team-a", "nope"]}, token=admin_key)
    assert refused.code == "invalid_argument" and "namespaces[1]" in refused.body["message"]
    for i in range(3):
        rpc(SERVICE + "IssueRunnerKey", {"name": f"r{i}"}, token=admin_key)
    first = rpc(SERVICE + "ListRunners", {"pageSize": 2}, token=admin_key).body
    second = rpc(SERVICE + "ListRunners", {"pageSize": 2, "pageToken": first["nextPageToken"]}, token=admin_key).body
    names = [r["name"] for r in first["runners"] + second["runners"]]
    assert names == ["r2", "r1", "r0"] and "nextPageToken" not in second
    assert rpc(SERVICE + "RevokeRunner", {"runnerId": "rnr_nope"}, token=admin_key).code == "not_found"
