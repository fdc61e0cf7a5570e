"""PrecompiledQuery.objects: model instances as iterating the queryset gives them, related rows attached."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from controlplane.precompiled import PrecompiledQuery
from tests.conftest import SYSTEM
from workloads.models import Job
from workloads.services.jobs import run_job


def by_id(job_id):
    return Job.objects.select_related("namespace").filter(job_id=job_id).order_by()


def test_objects_equal_the_orm_s_with_select_related_attached(namespace):
    job = run_job(actor=SYSTEM, namespace="team-a", image="alpine:3", command=["echo", "hi"], env={"A": "1"})
    query = PrecompiledQuery(by_id, "job_id")
    expected = by_id(job.job_id).get()
    with CaptureQueriesContext(connection) as queries:
        (found,) = query.objects(job_id=job.job_id)
        assert found.namespace.name == "team-a"  # attached: no query of its own
    assert len(queries) == 1
    assert type(found) is Job and found.pk == expected.pk and not found._state.adding
    assert found._state.db == "default"
    fields = [field.attname for field in Job._meta.concrete_fields]
    assert [getattr(found, name) for name in fields] == [getattr(expected, name) for name in fields]
    assert found.created_at.tzinfo is not None
    assert query.objects(job_id="job_missing") == []


def test_objects_refuses_querysets_of_values(namespace):
    query = PrecompiledQuery(lambda name: by_id(name).values_list("job_id"), "name")
    assert query.rows(name="job_missing") == []
    with pytest.raises(TypeError, match="plain model querysets"):
        query.objects(name="job_missing")
