"""Page tokens are opaque and bound to their list: the containers lists' tokens carry the
resource's own keyset (creation time, public id), never a global row number, and nobody
but the server can read them."""

from __future__ import annotations

import base64
import re
from datetime import timedelta

import pytest
from django.core import signing
from django.utils import timezone

from controlplane.auth import Role
from controlplane.rpc import Error, pagination
from tests.support.world import path
from workloads.models import Job

pytestmark = pytest.mark.django_db
SALT = "containers.job.list"


def list_jobs(rpc, token, **body):
    return rpc(path("JobService/ListJobs"), {"namespace": "team-a", **body}, token=token)


@pytest.fixture
def operator(namespace, other_namespace, make_key):
    return make_key("team-a", Role.OPERATOR)


@pytest.fixture
def jobs(rpc, capabilities, operator):
    return [
        rpc(path("JobService/RunJob"), {"namespace": "team-a", "image": "alpine"}, token=operator).body["job"]["jobId"]
        for _ in range(3)
    ]


def test_a_token_reveals_nothing(rpc, operator, jobs):
    token = list_jobs(rpc, operator, pageSize=1).body["nextPageToken"]
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    for secret in (b"team-a", jobs[-1].encode(), b'{"p":'):
        assert secret not in raw
    # No readable text: sealed, not merely signed (16 printable bytes in a row: ~1e-5 by chance).
    assert not re.search(rb"[\x20-\x7e]{16}", raw)
    with pytest.raises(signing.BadSignature):
        signing.loads(token, salt=SALT)


def test_the_position_is_the_jobs_own_keyset(rpc, operator, jobs):
    token = list_jobs(rpc, operator, pageSize=1).body["nextPageToken"]
    newest = Job.objects.get(job_id=jobs[-1])
    assert pagination.decode(token, salt=SALT, binding="team-a") == [newest.created_at.isoformat(), newest.job_id]


def test_a_token_opens_only_for_its_own_list_and_namespace(rpc, operator, make_key, jobs):
    token = list_jobs(rpc, operator, pageSize=1).body["nextPageToken"]
    admin = make_key("team-a", Role.ADMIN)
    for procedure, body in [
        ("SandboxService/ListSandboxes", {"namespace": "team-a"}),
        ("WorkspaceService/ListWorkspaces", {"namespace": "team-a"}),
        ("JobService/ListJobs", {"namespace": "team-b"}),
    ]:
        result = rpc(path(procedure), {**body, "pageToken": token}, token=admin)
        assert result.code == "invalid_argument", (procedure, result)
        assert result.body["details"][0]["debug"]["fieldViolations"][0]["field"] == "pageToken"


@pytest.mark.parametrize(
    "mangle", [lambda t: t[:-2], lambda t: t[:10] + ("A" if t[10] != "A" else "B") + t[11:], str.upper]
)
def test_a_tampered_token_is_invalid_argument(rpc, operator, jobs, mangle):
    token = list_jobs(rpc, operator, pageSize=1).body["nextPageToken"]
    result = list_jobs(rpc, operator, pageToken=mangle(token))
    assert result.code == "invalid_argument" and "pageToken" in result.body["message"], result


def test_rows_created_at_the_same_instant_are_each_listed_once(rpc, operator, jobs):
    Job.objects.filter(job_id__in=jobs).update(created_at=timezone.now() - timedelta(minutes=1))
    seen, token = [], ""
    while True:
        body = list_jobs(rpc, operator, pageSize=1, pageToken=token).body
        seen += [job["jobId"] for job in body["jobs"]]
        token = body.get("nextPageToken", "")
        if not token:
            break
    assert seen == sorted(jobs, reverse=True)


def test_tokens_survive_a_key_rotation(settings):
    token = pagination.encode([1], salt=SALT)
    settings.SECRET_KEY_FALLBACKS = [settings.SECRET_KEY]
    settings.SECRET_KEY = "a-new-secret-key-" + "x" * 40
    assert pagination.decode(token, salt=SALT) == [1]
    settings.SECRET_KEY_FALLBACKS = []
    with pytest.raises(Error):
        pagination.decode(token, salt=SALT)
