"""workloads.converters.job_to_json (GetJob's and ListJobs' JSON, built without messages) is
exactly json_format.MessageToDict of job_to_proto, over random jobs and both kinds of reader;
and over the wire, JSON clients get what binary clients get."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from google.protobuf import json_format
from hypothesis import given, settings
from hypothesis import strategies as st

from controlplane.auth import Principal, Role
from controlplane.auth.principal import Kind
from namespaces.models import Namespace
from workloads.converters import job_to_json, job_to_proto
from workloads.models import Job
from workloads.services.jobs import run_job

SYSTEM = Principal.system("tests")

TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=8)
INT32 = st.integers(-(2**31), 2**31 - 1)
MOMENTS = st.one_of(
    st.none(),
    st.datetimes(
        min_value=datetime(1, 1, 2),
        max_value=datetime(9999, 12, 30),
        timezones=st.sampled_from([UTC, None, timezone(timedelta(hours=-3, minutes=-30))]),
    ),
)
READERS = st.sampled_from(
    [
        Principal(kind=Kind.API_KEY, roles={"ns": Role.OPERATOR}, key_id="key_a"),  # sees env values
        Principal(kind=Kind.API_KEY, roles={"ns": Role.VIEWER}, key_id="key_b"),  # names only
    ]
)


@st.composite
def jobs(draw) -> Job:
    return Job(
        job_id=draw(TEXT),
        namespace=Namespace(name=draw(st.sampled_from(["ns", ""]))),
        image=draw(TEXT),
        command=draw(st.lists(TEXT, max_size=3)),
        env=draw(st.dictionaries(TEXT, TEXT, max_size=3)),
        state=draw(st.sampled_from(Job.State.values)),
        created_at=draw(MOMENTS),
        updated_at=draw(MOMENTS),
        created_by=draw(TEXT),
        exit_code=draw(st.one_of(st.none(), st.just(0), INT32)),
        started_at=draw(MOMENTS),
        finished_at=draw(MOMENTS),
        attempt=draw(st.one_of(st.just(0), st.integers(0, 2**31 - 1))),
        reason=draw(TEXT),
        timeout_seconds=draw(st.one_of(st.just(0), st.integers(0, 2**31 - 1))),
    )


@settings(max_examples=300, deadline=None)
@given(jobs(), READERS)
def test_job_to_json_is_message_to_dict_of_the_message(job, reader):
    assert job_to_json(job, reader) == json_format.MessageToDict(job_to_proto(job, reader))


def test_a_viewer_gets_the_env_names_without_values_and_an_exit_code_of_zero_is_kept():
    job = Job(
        job_id="job_1", namespace=Namespace(name="ns"), env={"TOKEN": "s3cret"}, state=Job.State.SUCCEEDED, exit_code=0
    )
    viewer = Principal(kind=Kind.API_KEY, roles={"ns": Role.VIEWER}, key_id="key_b")
    assert job_to_json(job, viewer)["env"] == {"TOKEN": ""}
    assert job_to_json(job, viewer)["exitCode"] == 0
    assert job_to_json(job, viewer)["state"] == "JOB_STATE_SUCCEEDED"


@pytest.mark.parametrize("role", [Role.VIEWER, Role.OPERATOR])
def test_json_and_binary_clients_get_the_same_jobs(rpc, grpc_web, namespace, make_key, role):
    run_job(actor=SYSTEM, namespace="team-a", image="busybox", command=["true"], env={"TOKEN": "s3cret"})
    job = run_job(actor=SYSTEM, namespace="team-a", image="busybox", timeout_seconds=5)
    token = make_key("team-a", role)
    for procedure, body in (
        ("containers.api.v1.JobService/GetJob", {"jobId": job.job_id}),
        ("containers.api.v1.JobService/ListJobs", {"namespace": "team-a", "pageSize": 1}),  # with a next page
        ("containers.api.v1.JobService/ListJobs", {"namespace": "team-a"}),
    ):
        as_json, as_binary = rpc(procedure, body, token=token), grpc_web(procedure, body, token=token)
        assert as_json.status == 200 and as_binary.code is None, (as_json, as_binary)
        # The binary message through json_format; page tokens are sealed with a nonce: both have one or neither.
        assert without_token(as_json.body) == without_token(as_binary.body)
        assert ("nextPageToken" in as_json.body) == ("nextPageToken" in as_binary.body) == ("pageSize" in body)
    listed = rpc("containers.api.v1.JobService/ListJobs", {"namespace": "team-a"}, token=token).body["jobs"]
    assert [j["env"] for j in listed if "env" in j] == [{"TOKEN": "s3cret" if role >= Role.OPERATOR else ""}]


def without_token(body: dict) -> dict:
    return {key: value for key, value in body.items() if key != "nextPageToken"}
