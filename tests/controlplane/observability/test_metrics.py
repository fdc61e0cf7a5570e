"""/metrics in one process (runserver's mode): who may read it, and what the service records."""

from __future__ import annotations

import time

import pytest
from prometheus_client import REGISTRY

from apikeys.keycache import KeyCache
from controlplane.auth import Principal, Role
from tests.support.streams import stream_call
from workloads.models import Job
from workloads.services.jobs import run_job

TOKEN = "scrape-token-for-tests"
GET_NAMESPACE = "containers.api.v1.NamespaceService/GetNamespace"


def value(name: str, **labels) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_metrics_refuses_an_unauthenticated_scrape_when_a_token_is_configured(client, settings):
    settings.METRICS_BEARER_TOKEN = TOKEN
    refused = client.get("/metrics")
    assert refused.status_code == 401 and refused["WWW-Authenticate"] == 'Bearer realm="metrics"'
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Basic {TOKEN}").status_code == 401
    allowed = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert allowed.status_code == 200 and allowed["Content-Type"].startswith("text/plain; version=")


def test_metrics_without_a_token_is_for_allowed_networks_only(client, settings):
    settings.METRICS_BEARER_TOKEN = ""
    settings.METRICS_ALLOWED_NETWORKS = []
    assert client.get("/metrics").status_code == 403
    settings.METRICS_ALLOWED_NETWORKS = ["10.0.0.0/8", "::1"]
    assert client.get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="::1").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="192.168.1.1").status_code == 403
    assert client.get("/metrics", REMOTE_ADDR="").status_code == 403  # a Unix socket peer: the proxy


def test_rpc_and_authentication_metrics_have_bounded_labels(rpc, client, namespace, make_key, settings):
    settings.METRICS_BEARER_TOKEN = TOKEN
    settings.METRICS_QUERY_CACHE_SECONDS = 0
    admin, viewer = make_key("team-a", Role.ADMIN), make_key("team-a", Role.VIEWER)
    labels = {"service": "containers.api.v1.NamespaceService", "method": "GetNamespace"}
    before = {
        "ok": value("rpc_server_requests_total", **labels, code="ok"),
        "denied": value("rpc_server_requests_total", **labels, code="permission_denied"),
        "success": value("controlplane_authentications_total", authenticator="api_key", result="success"),
        "failure": value("controlplane_authentications_total", authenticator="api_key", result="failure"),
        "statements": value("rpc_server_db_statements_count", **labels),
    }
    assert rpc(GET_NAMESPACE, {"namespace": "team-a"}, token=admin).status == 200
    assert rpc(GET_NAMESPACE, {"namespace": "team-a"}, token=viewer).status == 403
    assert rpc(GET_NAMESPACE, {"namespace": "team-a"}, token="cpk_" + "x" * 36).status == 401
    assert rpc("containers.api.v1.NamespaceService/NoSuchMethod", {}, token=admin).status == 404

    assert value("rpc_server_requests_total", **labels, code="ok") == before["ok"] + 1
    assert value("rpc_server_requests_total", **labels, code="permission_denied") == before["denied"] + 1
    assert value("controlplane_authentications_total", authenticator="api_key", result="success") == (
        before["success"] + 2
    )
    assert value("controlplane_authentications_total", authenticator="api_key", result="failure") == (
        before["failure"] + 1
    )
    assert value("rpc_server_db_statements_count", **labels) == before["statements"] + 3
    text = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").content.decode()
    assert 'rpc_server_duration_seconds_bucket{code="ok",le="0.001",method="GetNamespace"' in text
    # No namespace, key or unknown method ever becomes a label.
    for unbounded in ('"team-a"', admin, viewer, '="key_', "NoSuchMethod"):
        assert unbounded not in text


def test_jobs_are_counted_by_state_at_scrape_time(client, namespace, settings):
    settings.METRICS_BEARER_TOKEN = TOKEN
    settings.METRICS_QUERY_CACHE_SECONDS = 0
    for _ in range(3):
        run_job(actor=Principal.system(), namespace="team-a", image="busybox")
    text = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").content.decode()
    assert 'controlplane_jobs{state="queued"} 3.0' in text
    assert 'controlplane_jobs{state="running"} 0.0' in text


def test_shed_and_deadline_refusals_are_counted(rpc, admin_key, settings):
    settings.TRUSTED_PROXIES = ["127.0.0.1"]
    shed, unavailable = (
        value("controlplane_requests_refused_total", reason="shed"),
        value("controlplane_unavailable_answers_total", cause="shed"),
    )
    queued_long = {"X-Request-Start": f"t={time.time() - 10:.3f}"}
    assert rpc(GET_NAMESPACE, {"namespace": "team-a"}, token=admin_key, headers=queued_long).status == 503
    assert value("controlplane_requests_refused_total", reason="shed") == shed + 1
    assert value("controlplane_unavailable_answers_total", cause="shed") == unavailable + 1
    deadline = value("controlplane_requests_refused_total", reason="deadline")
    expired = {**queued_long, "Connect-Timeout-Ms": "1"}
    assert rpc(GET_NAMESPACE, {"namespace": "team-a"}, token=admin_key, headers=expired).status == 504
    assert value("controlplane_requests_refused_total", reason="deadline") == deadline + 1


@pytest.mark.django_db
def test_key_cache_invalidations_are_counted():
    before = value("controlplane_apikey_cache_events_total", event="invalidation")
    KeyCache("default").evict("0" * 64)
    assert value("controlplane_apikey_cache_events_total", event="invalidation") == before + 1


@pytest.mark.django_db(transaction=True)  # a finished stream closes its connection, as at a request's end
def test_a_server_stream_is_counted_when_it_ends_with_its_code_and_bytes(client, namespace, admin_key):
    job = run_job(actor=Principal.system(), namespace="team-a", image="busybox")
    Job.objects.filter(pk=job.pk).update(state=Job.State.SUCCEEDED)  # ended, no output: the stream ends
    logs = {"service": "containers.api.v1.JobService", "method": "FollowJobLogs"}
    watch = {"service": "containers.api.v1.JobService", "method": "WatchJobs"}
    before = {
        code: value("rpc_server_requests_total", **labels, code=code)
        for labels, code in ((logs, "ok"), (logs, "not_found"), (watch, "canceled"))
    }
    sent = value("rpc_server_response_size_bytes_sum", **logs)
    statements = value("rpc_server_db_statements_sum", **logs)

    response, received = stream_call(
        client, "containers.api.v1.JobService/FollowJobLogs", {"jobId": job.job_id}, admin_key
    )
    assert response.status_code == 200 and b'"complete":true' in received
    assert value("rpc_server_requests_total", **logs, code="ok") == before["ok"] + 1
    assert value("rpc_server_response_size_bytes_sum", **logs) == sent + len(received)
    assert value("rpc_server_db_statements_sum", **logs) >= statements + 2  # the job, read while sending

    # An error the stream ends with is its code, though the HTTP status is 200.
    unknown = {"jobId": "job_00000000000000000000"}
    response, received = stream_call(client, "containers.api.v1.JobService/FollowJobLogs", unknown, admin_key)
    assert response.status_code == 200 and b'"not_found"' in received
    assert value("rpc_server_requests_total", **logs, code="not_found") == before["not_found"] + 1

    # A watch never ends by itself: the client going away ends it, canceled.
    stream_call(client, "containers.api.v1.JobService/WatchJobs", {"namespace": "team-a"}, admin_key, read_all=False)
    assert value("rpc_server_requests_total", **watch, code="canceled") == before["canceled"] + 1
