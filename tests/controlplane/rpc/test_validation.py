"""Out-of-range well-known types in binary requests: invalid_argument naming the field, not a 500.

The JSON codec refuses them while parsing; the binary codec decodes any int64 seconds and
int32 nanos, so controlplane.rpc.validation checks the ranges for every codec.
"""

from __future__ import annotations

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp

from containers.api.v1 import job_pb2, namespace_pb2
from controlplane.errors import Error
from controlplane.rpc.validation import validate_request
from uploads.api.v1 import uploads_pb2

pytestmark = pytest.mark.django_db

LIST_UPLOADS = "uploads.api.v1.BucketUploadsService/ListUploads"
ISSUE_API_KEY = "containers.api.v1.NamespaceService/IssueApiKey"
YEAR_10000 = 253_402_300_800


def binary(rpc, token, procedure, message):
    return rpc(procedure, data=message.SerializeToString(), content_type="application/proto", token=token)


@pytest.mark.parametrize(
    "timestamp, field",
    [
        ({"seconds": 2**62}, "dateFrom"),
        ({"seconds": -(2**63)}, "dateFrom"),
        ({"seconds": 0, "nanos": -1}, "dateFrom"),
        ({"seconds": 0, "nanos": 1_000_000_000}, "dateFrom"),
        ({"seconds": YEAR_10000}, "dateTo"),
        ({"seconds": -62_135_596_801}, "dateTo"),  # the second before 0001-01-01
    ],
)
def test_list_uploads_timestamp_out_of_range(rpc, admin_key, timestamp, field):
    request = uploads_pb2.ListUploadsRequest(**{"date_from" if field == "dateFrom" else "date_to": timestamp})
    result = binary(rpc, admin_key, LIST_UPLOADS, request)
    assert result.code == "invalid_argument", result
    assert result.body["details"][0]["debug"]["fieldViolations"][0]["field"] == field


def test_issue_api_key_expiry_past_year_9999(rpc, admin_key):
    request = namespace_pb2.IssueApiKeyRequest(
        namespace="team-a", name="ci", role=namespace_pb2.ROLE_VIEWER, expires_at={"seconds": YEAR_10000 + 86400}
    )
    result = binary(rpc, admin_key, ISSUE_API_KEY, request)
    assert result.code == "invalid_argument", result
    assert result.body["message"].startswith("expiresAt: must be between 0001-01-01T00:00:00Z and 9999-12-31")


def test_the_last_representable_instant_is_accepted(rpc, admin_key):
    last = {"seconds": YEAR_10000 - 1, "nanos": 999_999_999}
    request = namespace_pb2.IssueApiKeyRequest(namespace="team-a", name="ci", role=1, expires_at=last)
    assert binary(rpc, admin_key, ISSUE_API_KEY, request).status == 200
    first = uploads_pb2.ListUploadsRequest(date_from={"seconds": -62_135_596_800})
    assert binary(rpc, admin_key, LIST_UPLOADS, first).status == 200


@pytest.mark.parametrize(
    "duration, valid",
    [
        (Duration(seconds=1, nanos=5), True),
        (Duration(seconds=-1, nanos=-5), True),
        (Duration(seconds=1, nanos=-5), False),
        (Duration(seconds=315_576_000_001), False),
        (Duration(nanos=1_000_000_000), False),
    ],
)
def test_duration_ranges(duration, valid):
    # No request carries a Duration yet; the check is ready for the first that does.
    holder = _holder(duration=duration)
    if valid:
        validate_request(holder)
    else:
        with pytest.raises(Error, match=r"\Aduration: "):
            validate_request(holder)


def test_timestamp_in_any_message():
    with pytest.raises(Error, match=r"\Atimestamp: .*out of range"):
        validate_request(_holder(timestamp=Timestamp(seconds=2**40)))


def _holder(**values):
    """A message with a Duration and a Timestamp field, added once to the default pool."""
    pool = descriptor_pool.Default()
    try:
        descriptor = pool.FindMessageTypeByName("tests.validation.Holder")
    except KeyError:
        file = descriptor_pb2.FileDescriptorProto(
            name="tests/validation_holder.proto",
            package="tests.validation",
            dependency=["google/protobuf/duration.proto", "google/protobuf/timestamp.proto"],
            syntax="proto3",
        )
        message = file.message_type.add(name="Holder")
        for number, (name, type_name) in enumerate((("duration", "Duration"), ("timestamp", "Timestamp")), 1):
            message.field.add(
                name=name, json_name=name, number=number, type=11, label=1, type_name=f".google.protobuf.{type_name}"
            )
        descriptor = pool.Add(file) and pool.FindMessageTypeByName("tests.validation.Holder")
    return message_factory.GetMessageClass(descriptor)(**values)


@pytest.mark.parametrize(
    "env, message",
    [
        ({"A\x00": "v"}, "env: keys must not contain NUL characters"),
        ({"K" * 257: "v"}, "env: keys must be at most 256 characters, got 257"),
        ({"K": "v\x00"}, "env['K']: must not contain NUL characters"),
    ],
)
def test_map_keys_and_values_are_named(env, message):
    with pytest.raises(Error) as caught:
        validate_request(job_pb2.RunJobRequest(namespace="team-a", image="alpine", env=env))
    assert caught.value.message == message
