"""ListUploads authorization (scope upl:bucket:read = VIEWER+ in the bucket's namespace) and deadline."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection

from apikeys.services import issue_agent_key
from controlplane.auth import Kind, Principal, Role
from controlplane.errors import Error
from tests.conftest import SYSTEM
from tests.support.uploads_factory import LIST, add, ids, make_bucket, record
from uploads.api.v1 import uploads_pb2 as pb
from uploads.permissions import SCOPE, CanReadUploads
from uploads.read import page_query


@pytest.fixture
def buckets(namespace, other_namespace):
    mine, theirs = make_bucket("team-a", "docs"), make_bucket("team-b", "docs")
    add(mine, [record(1), record(2)])
    add(theirs, [record(3)])
    return mine, theirs


def by_id(bucket) -> dict:
    return {"bucket": {"bucketId": str(bucket.pk)}}


@pytest.mark.parametrize("role", [Role.VIEWER, Role.OPERATOR])
def test_viewer_and_above_read_their_namespace(rpc, buckets, make_key, role):
    key = make_key("team-a", role)
    assert ids(rpc(LIST, by_id(buckets[0]), token=key)) == ["u0002", "u0001"]
    assert ids(rpc(LIST, {"bucket": {"namespace": "team-a", "name": "docs"}}, token=key)) == ["u0002", "u0001"]


def test_another_namespace_is_permission_denied(rpc, buckets, make_key):
    key = make_key("team-a")
    foreign = rpc(LIST, by_id(buckets[1]), token=key)
    assert foreign.code == "permission_denied"
    assert "team-b" not in foreign.body["message"]  # the owner of a foreign bucket id is not named
    assert rpc(LIST, {"bucket": {"namespace": "team-b", "name": "docs"}}, token=key).code == "permission_denied"
    # By name in a foreign namespace: denied before any lookup, so existence is not revealed.
    assert rpc(LIST, {"bucket": {"namespace": "team-b", "name": "nope"}}, token=key).code == "permission_denied"


def test_unknown_bucket_is_not_found(rpc, buckets, make_key):
    key = make_key("team-a")
    assert rpc(LIST, {"bucket": {"bucketId": str(uuid.uuid4())}}, token=key).code == "not_found"
    assert rpc(LIST, {"bucket": {"namespace": "team-a", "name": "nope"}}, token=key).code == "not_found"


def test_malformed_bucket_reference(rpc, buckets, make_key):
    key = make_key("team-a")
    assert rpc(LIST, {"bucket": {"bucketId": "not-a-uuid"}}, token=key).code == "invalid_argument"
    assert rpc(LIST, {"bucket": {"namespace": "team-a"}}, token=key).code == "invalid_argument"
    both = {"bucket": {"bucketId": str(buckets[0].pk), "namespace": "team-a", "name": "docs"}}
    assert rpc(LIST, both, token=key).code == "invalid_argument"


def test_admin_reads_every_namespace(rpc, buckets, admin_key):
    assert ids(rpc(LIST, by_id(buckets[1]), token=admin_key)) == ["u0003"]
    assert ids(rpc(LIST, {}, token=admin_key)) == ["u0003", "u0002", "u0001"]


def test_empty_request_lists_what_the_caller_may_read(rpc, buckets, make_key):
    assert ids(rpc(LIST, {}, token=make_key("team-a"))) == ["u0002", "u0001"]
    assert ids(rpc(LIST, {}, token=make_key("team-b"))) == ["u0003"]


def test_no_credential_is_unauthenticated(rpc, buckets):
    result = rpc(LIST, by_id(buckets[0]))
    assert result.status == 401 and result.code == "unauthenticated"
    assert rpc(LIST, by_id(buckets[0]), token="cpk_bogus").code == "unauthenticated"


@pytest.mark.parametrize("workspace_scope", ["", "wsp_any"])
def test_agent_keys_are_denied(rpc, buckets, workspace_scope):
    # A sandbox agent key, as CreateSandbox issues it, in the bucket's own namespace.
    _, key = issue_agent_key(actor=SYSTEM, namespace="team-a", sandbox_id="sbx_test", workspace_scope=workspace_scope)
    assert rpc(LIST, by_id(buckets[0]), token=key).code == "permission_denied"
    assert rpc(LIST, {}, token=key).code == "permission_denied"


def request_for(bucket) -> pb.ListUploadsRequest:
    return pb.ListUploadsRequest(bucket=pb.BucketRef(bucket_id=str(bucket.pk)))


@pytest.mark.parametrize(
    "principal, allowed",
    [
        # OIDC bearer tokens must carry the scope as well as the role.
        (Principal(kind=Kind.USER, roles={"team-a": Role.VIEWER}, via="bearer", scopes=frozenset({SCOPE})), True),
        (Principal(kind=Kind.USER, roles={"team-a": Role.VIEWER}, via="bearer"), False),
        (Principal(kind=Kind.USER, roles={"team-a": Role.ADMIN}, admin=True, via="bearer"), False),
        (Principal(kind=Kind.USER, roles={"team-b": Role.VIEWER}, via="bearer", scopes=frozenset({SCOPE})), False),
        # A browser session is not a scoped token: the role decides.
        (Principal(kind=Kind.USER, roles={"team-a": Role.VIEWER}, via="session"), True),
        (Principal(kind=Kind.USER, roles={}, via="session"), False),
        (Principal(kind=Kind.AGENT, roles={"team-a": Role.ADMIN}, via="bearer"), False),
    ],
)
def test_scope_rules_for_principals(buckets, principal, allowed):
    permission = CanReadUploads()
    if allowed:
        permission.check(principal, request_for(buckets[0]))
    else:
        with pytest.raises(Error) as raised:
            permission.check(principal, request_for(buckets[0]))
        assert raised.value.code.wire_name == "permission_denied"


def test_timeout_cancels_the_query_with_deadline_exceeded(rpc, buckets, make_key, monkeypatch):
    # Deterministically slow on both databases: pg_sleep, or a long recursive count on SQLite.
    if connection.vendor == "postgresql":
        slow = "(SELECT COUNT(*) FROM pg_sleep(5)) > 0"
    else:
        slow = (
            "(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 500000000)"
            " SELECT MAX(x) FROM c) > 0"
        )
    original = page_query.conditions

    def slowed(*args, **kwargs):
        where, params = original(*args, **kwargs)
        return [*where, slow], params

    monkeypatch.setattr(page_query, "conditions", slowed)
    key = make_key("team-a")
    result = rpc(LIST, by_id(buckets[0]), token=key, headers={"Connect-Timeout-Ms": "300"})
    assert result.code == "deadline_exceeded"
    # The connection is usable afterwards and the statement timeout did not leak.
    monkeypatch.setattr(page_query, "conditions", original)
    assert ids(rpc(LIST, by_id(buckets[0]), token=key)) == ["u0002", "u0001"]
