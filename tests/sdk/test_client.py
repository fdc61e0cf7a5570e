"""Client and AdminClient, every method, against a real gunicorn (tests/sdk/conftest.py)."""

from __future__ import annotations

import pytest
from cpsdk import AdminClient, Binding, Client, InternalTarget, Role, errors
from cpsdk._gen.containers.api.v1 import job_pb2

from controlplane.auth import Role as ServerRole
from tests.support.uploads_factory import add, bool_kv, make_bucket, record, string_kv

pytestmark = pytest.mark.e2e


@pytest.fixture
def operator(sdk_service, transactional_db, namespace, make_key):
    with Client(sdk_service.url, make_key("team-a", ServerRole.OPERATOR)) as client:
        yield client


def test_client_learns_its_namespace_and_has_no_admin_surface(operator):
    assert operator.namespace == "team-a"
    me = operator.whoami()
    assert (me.kind, me.admin) == ("api_key", False)
    assert [(n.namespace, Role(n.role)) for n in me.namespaces] == [("team-a", Role.OPERATOR)]
    public = [name for name in dir(operator) if not name.startswith("_")]
    assert public == [
        "close",
        "egress",
        "environments",
        "jobs",
        "namespace",
        "resolve_namespace",
        "sandboxes",
        "uploads",
        "whoami",
        "workspaces",
    ]
    for name in public:
        assert "namespace_service" not in str(type(getattr(operator, name))).lower()


def test_jobs(operator):
    job = operator.jobs.run("busybox:1.36", command=["echo", "hi"], env={"A": "1"})
    assert (job.namespace, job.image, list(job.command), dict(job.env)) == (
        "team-a",
        "busybox:1.36",
        ["echo", "hi"],
        {"A": "1"},
    )
    assert job.state == job_pb2.JOB_STATE_QUEUED
    assert operator.jobs.get(job.job_id) == job
    assert [j.job_id for j in operator.jobs.list()] == [job.job_id]
    assert operator.jobs.cancel(job.job_id).state == job_pb2.JOB_STATE_CANCELLED


def test_sandboxes_workspaces_environments_egress(operator, admin_key, sdk_service):
    workspace = operator.workspaces.create("scratch")
    assert operator.workspaces.get(workspace.workspace_id).name == "scratch"
    assert [w.workspace_id for w in operator.workspaces.list()] == [workspace.workspace_id]

    sandbox = operator.sandboxes.create("python:3.12", workspace_id=workspace.workspace_id)
    assert operator.sandboxes.get(sandbox.sandbox_id).workspace_id == workspace.workspace_id
    assert [s.sandbox_id for s in operator.sandboxes.list()] == [sandbox.sandbox_id]
    assert (
        operator.sandboxes.preview_url(sandbox.sandbox_id)
        == f"https://sbx-{sandbox.sandbox_id.removeprefix('sbx_')}.preview.example.test/"
    )
    assert operator.sandboxes.app_key(sandbox.sandbox_id)
    operator.sandboxes.delete(sandbox.sandbox_id)
    operator.workspaces.delete(workspace.workspace_id)
    with pytest.raises(errors.NotFound):
        operator.workspaces.get(workspace.workspace_id)

    environment = operator.environments.register("py", "python:3.12")
    assert operator.environments.get(environment.environment_id).name == "py"
    assert [e.environment_id for e in operator.environments.list()] == [environment.environment_id]
    assert operator.environments.build(environment.environment_id).environment_id == environment.environment_id

    with AdminClient(sdk_service.url, admin_key) as admin:
        admin.register_internal_target("team-a", InternalTarget("db", "db.internal", (5432,)))
    grant = operator.egress.grant("db")
    other = operator.egress.grant("api.example.com:443")
    assert {g.grant_id for g in operator.egress.list()} == {grant.grant_id, other.grant_id}
    operator.egress.revoke(other.grant_id)
    assert [g.grant_id for g in operator.egress.list()] == [grant.grant_id]
    kinds = [e.kind for e in operator.egress.events()]
    assert len(kinds) == 3


def test_iterators_follow_pages_and_cursors(operator):
    for n in range(5):
        operator.jobs.run("busybox:1.36", command=[str(n)])
    listed = list(operator.jobs.list(page_size=2))  # three pages
    assert [list(j.command) for j in listed] == [["4"], ["3"], ["2"], ["1"], ["0"]]

    bucket = make_bucket("team-a", "docs")
    add(
        bucket,
        [
            record(
                n, tags=["finance"] if n % 2 else [], metadataKvs=[string_kv("status", "final"), bool_kv("ok", True)]
            )
            for n in range(1, 8)
        ],
    )
    finance = operator.uploads.list(
        "docs", tags=["finance"], metadata={"status": "final", "ok": True}, sort="size_bytes", order="asc", page_size=2
    )
    assert [u.upload_id for u in finance] == ["u0001", "u0003", "u0005", "u0007"]
    assert [u.upload_id for u in operator.uploads.list("team-a/docs", slug="FILE-000", page_size=3)][:2] == [
        "u0007",
        "u0006",
    ]


def test_admin_client_every_method(sdk_service, transactional_db, admin_key):
    with AdminClient(sdk_service.url, admin_key) as admin:
        created = admin.create_namespace("team-c", groups=[Binding("devs", Role.OPERATOR)], quotas={"max_sandboxes": 2})
        assert [(g.oidc_group, g.role) for g in created.groups] == [("devs", Role.OPERATOR)]
        assert admin.get_namespace("team-c").quotas.max_sandboxes == 2
        assert {n.namespace for n in admin.list_namespaces(page_size=1)} == {"team-a", "team-c"}

        # Full replace of the groups; quotas, not passed, are kept.
        updated = admin.update_namespace("team-c", groups=[Binding("team-c-ops", Role.VIEWER)])
        assert [(g.oidc_group, g.role) for g in updated.groups] == [("team-c-ops", Role.VIEWER)]
        assert updated.quotas.max_sandboxes == 2
        assert admin.update_namespace("team-c", groups=[]).groups == []

        target = admin.register_internal_target("team-c", InternalTarget("cache", "redis.internal", (6379,)))
        assert [(t.name, t.host, list(t.ports)) for t in target.internal_targets] == [
            ("cache", "redis.internal", [6379])
        ]

        issued = admin.issue_api_key("team-c", "ci", Role.VIEWER)
        assert issued.plaintext.startswith("cpk_") and issued.key.role == Role.VIEWER
        assert [k.key_id for k in admin.list_api_keys("team-c")] == [issued.key.key_id]
        with Client(sdk_service.url, issued.plaintext) as viewer:
            assert viewer.namespace == "team-c"
        admin.revoke_api_key(issued.key.key_id)
        with pytest.raises(errors.Unauthenticated, match="revoked"):
            Client(sdk_service.url, issued.plaintext).whoami()


def test_whoami_remembers_the_namespace_it_learned(sdk_service, transactional_db, namespace, make_key):
    with Client(sdk_service.url, make_key("team-a", ServerRole.OPERATOR)) as client:
        client.whoami()
        assert client._transport.namespace == "team-a"  # no second WhoAmI for the next call
        assert client.namespace == "team-a"
