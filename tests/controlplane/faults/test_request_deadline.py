"""The call's deadline, computed once where the request enters (faults.arrival.request_deadline),
from Connect-Timeout-Ms or, for gRPC and gRPC-Web, grpc-timeout."""

import time

import pytest

from controlplane.faults.arrival import ARRIVAL_KEY, request_deadline, timeout_ms


@pytest.mark.parametrize(
    ("value", "parsed"),
    [("10S", 10_000), ("1500m", 1500), ("2M", 120_000), ("1H", 3_600_000), ("3u", 1), ("999999n", 1), ("0m", None)],
)
def test_grpc_timeout_in_milliseconds_rounded_up(value, parsed):
    assert timeout_ms({"HTTP_GRPC_TIMEOUT": value}) == parsed


@pytest.mark.parametrize("value", ["10", "10s", "123456789S", "S", "-1S", "1.5S"])
def test_a_malformed_grpc_timeout_is_left_to_the_runtime(value):
    assert timeout_ms({"HTTP_GRPC_TIMEOUT": value}) is None


def test_connect_timeout_ms_wins_over_grpc_timeout():
    assert timeout_ms({"HTTP_CONNECT_TIMEOUT_MS": "250", "HTTP_GRPC_TIMEOUT": "10S"}) == 250


def test_a_zero_timeout_has_elapsed_on_arrival():
    deadline = request_deadline({ARRIVAL_KEY: time.time(), "HTTP_CONNECT_TIMEOUT_MS": "0"})
    assert deadline is not None and deadline <= time.monotonic()


def test_no_timeout_no_deadline():
    assert request_deadline({ARRIVAL_KEY: time.time()}) is None
