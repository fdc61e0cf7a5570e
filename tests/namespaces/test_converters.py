"""namespaces.converters.timestamp: exactly what Timestamp.FromDatetime gives."""

from datetime import UTC, datetime, timedelta, timezone

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from namespaces.converters import timestamp


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
