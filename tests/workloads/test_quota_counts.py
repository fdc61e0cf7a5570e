"""Quotas cost a count query only when they are set (workloads/services/common.enforce_quota)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from namespaces.services import update_namespace
from tests.conftest import SYSTEM
from workloads.services import egress, environments, jobs, sandboxes, workspaces

pytestmark = pytest.mark.django_db

CREATES = {
    "max_running_jobs": lambda: jobs.run_job(actor=SYSTEM, namespace="team-a", image="alpine"),
    "max_sandboxes": lambda: sandboxes.create_sandbox(actor=SYSTEM, namespace="team-a", image="alpine"),
    "max_workspaces": lambda: workspaces.create_workspace(actor=SYSTEM, namespace="team-a", name="w"),
    "max_environments": lambda: environments.register_environment(
        actor=SYSTEM, namespace="team-a", name="e", image="alpine"
    ),
    "max_egress_grants": lambda: egress.grant_egress(actor=SYSTEM, namespace="team-a", target="api.example.com"),
}


def _counts(create) -> int:
    with CaptureQueriesContext(connection) as queries:
        create()
    return sum("COUNT(" in q["sql"].upper() for q in queries.captured_queries)


@pytest.mark.parametrize("quota", CREATES)
def test_an_unset_quota_costs_no_count_query(capabilities, namespace, quota):
    assert _counts(CREATES[quota]) == 0


@pytest.mark.parametrize("quota", CREATES)
def test_a_set_quota_counts_once(capabilities, namespace, quota):
    update_namespace(actor=SYSTEM, name="team-a", quotas={quota: 5})
    assert _counts(CREATES[quota]) == 1
