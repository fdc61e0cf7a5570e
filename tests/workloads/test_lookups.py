"""By-id methods look their resource up once per call: the authorizer and the handler share the
row (workloads.selectors.get through controlplane.lookups.looked_up), and a write still locks it."""

import pytest
from django.db import connection

from controlplane.auth import Role
from tests.support.roundtrips import RoundTrips
from tests.support.world import path

pytestmark = pytest.mark.django_db(transaction=True)  # autocommit, as in production


@pytest.fixture
def operator(namespace, make_key):
    return make_key("team-a", Role.OPERATOR)


@pytest.fixture
def job_id(rpc, operator, no_capabilities):
    job = rpc(path("JobService/RunJob"), {"namespace": "team-a", "image": "alpine"}, token=operator)
    return job.body["job"]["jobId"]


def tables(database: RoundTrips) -> list[str]:
    """The table each SELECT reads (its outermost FROM)."""
    selects = [sql for sql, _ in database.statements if sql.startswith("SELECT")]
    return [sql.rsplit(" FROM ", 1)[1].split()[0].strip('"') for sql in selects]


def test_get_job_is_the_key_lookup_and_one_query(rpc, operator, job_id):
    with RoundTrips() as database:
        got = rpc(path("JobService/GetJob"), {"jobId": job_id}, token=operator)
    assert got.body["job"]["jobId"] == job_id
    assert tables(database) == ["apikeys_apikey", "containers_job"], database.statements
    assert database.transactions == 0
    if connection.vendor == "postgresql":
        assert database.round_trips == 2, database.sent


def test_each_call_looks_the_row_up_again(rpc, operator, job_id):
    get = {"jobId": job_id}
    with RoundTrips() as database:
        rpc(path("JobService/GetJob"), get, token=operator)
        rpc(path("JobService/CancelJob"), get, token=operator)
        after = rpc(path("JobService/GetJob"), get, token=operator)
    assert tables(database).count("containers_job") >= 4  # nothing carried over between calls
    assert after.body["job"]["state"] == "JOB_STATE_CANCELLED"


def test_a_write_locks_the_row_it_changes_after_the_permission_check(rpc, operator, job_id):
    with RoundTrips() as database:
        cancelled = rpc(path("JobService/CancelJob"), {"jobId": job_id}, token=operator)
    assert cancelled.body["job"]["state"] == "JOB_STATE_CANCELLED"
    reads = [sql for sql, _ in database.statements if sql.startswith("SELECT") and "containers_job" in sql]
    assert len(reads) == 2, reads  # the authorizer's read, then the service's locked read
    if connection.features.has_select_for_update:
        assert "FOR UPDATE" not in reads[0] and "FOR UPDATE" in reads[1]
    assert database.transactions >= 1


def test_an_unknown_id_is_not_found(rpc, operator):
    missing = rpc(path("JobService/GetJob"), {"jobId": "job_nowhere"}, token=operator)
    assert (missing.status, missing.code) == (404, "not_found")
