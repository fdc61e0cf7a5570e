"""namespaces.converters: timestamp is exactly what Timestamp.FromDatetime gives, and
namespace_to_json exactly MessageToDict of namespace_to_proto; over the wire, JSON clients get
what binary clients get."""

from datetime import UTC, datetime, timedelta, timezone

import pytest
from google.protobuf import json_format
from google.protobuf.timestamp_pb2 import Timestamp
from hypothesis import given, settings
from hypothesis import strategies as st

from containers.api.v1 import namespace_pb2 as pb
from controlplane.auth import Principal, Role
from namespaces.converters import namespace_to_json, namespace_to_proto, timestamp
from namespaces.models import QUOTA_FIELDS
from namespaces.selectors import NamespaceRecord
from namespaces.services import Binding, PullSecret, Target, create_namespace


@pytest.mark.parametrize(
    "value",
    [
        datetime(2026, 11, 22, 3, 4, 5, 123456, tzinfo=UTC),
        datetime(2026, 11, 22, 3, 4, 5, 999999, tzinfo=timezone(timedelta(hours=-7, minutes=-30))),
        datetime(1969, 12, 31, 23, 59, 59, 500000, tzinfo=UTC),  # before the epoch: nanos stay positive
        datetime(1970, 1, 1, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        datetime(2026, 1, 2, 3, 4, 5, 6),  # naive: UTC
    ],
)
def test_same_as_from_datetime(value):
    expected = Timestamp()
    expected.FromDatetime(value)
    assert timestamp(value) == expected


def test_none_is_unset():
    assert timestamp(None) is None


# namespace_to_json: exactly json_format.MessageToDict(namespace_to_proto(...)), over random records.
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=8)
UINT32 = st.integers(0, 2**32 - 1)
MOMENTS = st.datetimes(
    min_value=datetime(1, 1, 2),
    max_value=datetime(9999, 12, 30),
    timezones=st.sampled_from([UTC, None, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-8))]),
)
RECORDS = st.builds(
    NamespaceRecord,
    name=TEXT,
    created_at=MOMENTS,
    updated_at=MOMENTS,
    quotas=st.dictionaries(st.sampled_from(QUOTA_FIELDS), UINT32),
    groups=st.lists(st.tuples(TEXT, st.sampled_from([r.number for r in pb.Role.DESCRIPTOR.values])), max_size=3),
    internal_targets=st.lists(st.tuples(TEXT, TEXT, st.lists(UINT32, max_size=3)), max_size=3),
    image_pull_secrets=st.lists(st.tuples(TEXT, TEXT), max_size=3),
)


@settings(max_examples=300, deadline=None)
@given(RECORDS)
def test_namespace_to_json_is_message_to_dict_of_the_message(record):
    assert namespace_to_json(record) == json_format.MessageToDict(namespace_to_proto(record))


def test_namespace_to_json_keeps_a_quota_set_to_zero_and_an_empty_quotas_object():
    record = NamespaceRecord("a", datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 1, tzinfo=UTC), {}, [], [], [])
    assert namespace_to_json(record)["quotas"] == {} == json_format.MessageToDict(namespace_to_proto(record))["quotas"]
    zero = record._replace(quotas={"max_sandboxes": 0})
    assert namespace_to_json(zero)["quotas"] == {"maxSandboxes": 0}


def test_json_and_binary_clients_get_the_same_namespaces(rpc, grpc_web, admin_key):
    create_namespace(
        actor=Principal.system("tests"),
        name="team-b",
        groups=[Binding("devs", Role.OPERATOR)],
        internal_targets=[Target("db", "db.internal", (5432, 5433))],
        image_pull_secrets=[PullSecret("ghcr.io", "vault://kv/ghcr")],
        quotas={"max_sandboxes": 0, "max_running_jobs": 5},
    )
    for procedure, body in (
        ("containers.api.v1.NamespaceService/GetNamespace", {"namespace": "team-b"}),
        ("containers.api.v1.NamespaceService/GetNamespace", {"namespace": "team-a"}),  # no children, no quotas
        ("containers.api.v1.NamespaceService/ListNamespaces", {"pageSize": 1}),  # with a next page
        ("containers.api.v1.NamespaceService/ListNamespaces", {}),
    ):
        as_json, as_binary = rpc(procedure, body, token=admin_key), grpc_web(procedure, body, token=admin_key)
        assert as_json.status == 200 and as_binary.code is None, (as_json, as_binary)
        # The binary message through json_format; page tokens are sealed with a nonce: both have one or neither.
        assert without_token(as_json.body) == without_token(as_binary.body)
        assert ("nextPageToken" in as_json.body) == ("nextPageToken" in as_binary.body) == ("pageSize" in body)


def without_token(body: dict) -> dict:
    return {key: value for key, value in body.items() if key != "nextPageToken"}
