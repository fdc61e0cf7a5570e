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
from controlplane.rpc import Code, Error, pagination
from tests.support.roundtrips import RoundTrips
from tests.support.world import path
from workloads import selectors
from workloads.models import EgressEvent, Job

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


def test_a_page_is_one_statement_and_an_empty_one_looks_the_namespace_up(rpc, operator, jobs, make_key):
    with RoundTrips() as first:
        rows = selectors.page(Job, namespace="team-a", limit=2)
    with RoundTrips() as later:
        more = selectors.page(Job, namespace="team-a", after=selectors.position_of(rows[-1]), limit=2)
    assert [j.job_id for j in rows + more] == list(reversed(jobs))
    assert rows[0].namespace.name == "team-a"  # the namespace comes with the row (select_related)
    assert len(first.statements) == len(later.statements) == 1
    with RoundTrips() as empty:
        assert selectors.page(Job, namespace="team-b") == []
    assert len(empty.statements) == 2  # the page, then whether team-b exists (it does)
    with pytest.raises(Error) as refused:
        selectors.page(Job, namespace="nowhere")
    assert refused.value.code is Code.NOT_FOUND and "'nowhere'" in str(refused.value)


@pytest.mark.parametrize("same_instant", [True, False])
def test_events_page_by_time_then_row_id_one_by_one(namespace, other_namespace, same_instant):
    now = timezone.now()
    events = [
        EgressEvent.objects.create(
            namespace=namespace, kind="granted", target="example.com", actor="tests",
            at=now if same_instant else now - timedelta(seconds=i % 2),
        )
        for i in range(5)
    ]  # fmt: skip
    EgressEvent.objects.create(namespace=other_namespace, kind="granted", target="example.com", actor="tests", at=now)
    seen, after = [], None
    while rows := selectors.page(EgressEvent, namespace="team-a", after=after, limit=1):
        seen += [event.pk for event in rows]
        after = selectors.position_of(rows[-1])
    expected = sorted(events, key=lambda event: (event.at, event.pk), reverse=True)
    assert seen == [event.pk for event in expected]
