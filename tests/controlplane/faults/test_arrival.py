"""Arrival time and the call deadline counted from it (controlplane/faults/arrival.py)."""

import time

import pytest

from controlplane.faults.arrival import (
    ARRIVAL_KEY,
    ArrivalStamp,
    arrival_time,
    call_deadline,
    parse_request_start,
    timeout_ms,
)
from namespaces.models import Namespace
from tests.support.testing_service import PATH, TESTING_SERVICE

NOW = 1_800_000_000.0
PROXY = ["10.0.0.0/8", "127.0.0.1"]


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("t=1799999999.250", 1799999999.25),  # nginx: t=${msec}
        ("1799999999.25", 1799999999.25),
        ("1799999999250", 1799999999.25),  # milliseconds
        ("1799999999250000", 1799999999.25),  # microseconds
        ("garbage", None),
        ("t=-5", None),
    ],
)
def test_x_request_start_formats(header, seconds):
    assert parse_request_start(header) == seconds


def test_x_request_start_is_believed_only_from_a_trusted_proxy():
    environ = {"HTTP_X_REQUEST_START": "t=1799999998.000", "REMOTE_ADDR": "10.1.2.3"}
    assert arrival_time(environ, NOW, PROXY) == 1799999998.0
    assert arrival_time({**environ, "REMOTE_ADDR": "192.0.2.7"}, NOW, PROXY) == NOW  # anyone else: ignored
    assert arrival_time(environ, NOW, []) == NOW  # no proxy configured: ignored
    assert arrival_time({**environ, "HTTP_X_REQUEST_START": "t=1900000000"}, NOW, PROXY) == NOW  # never in the future


def test_x_request_start_over_a_unix_socket_only_when_it_is_trusted():
    # gunicorn on a Unix socket (deploy/) leaves REMOTE_ADDR empty: the peer is whoever may open it.
    environ = {"HTTP_X_REQUEST_START": "t=1799999998.000", "REMOTE_ADDR": ""}
    assert arrival_time(environ, NOW, ["unix"]) == 1799999998.0
    assert arrival_time(environ, NOW, PROXY) == NOW  # only networks listed: a socket peer is not one
    assert arrival_time({**environ, "REMOTE_ADDR": "10.1.2.3"}, NOW, ["unix"]) == NOW


def test_the_wsgi_wrapper_stamps_before_the_application_runs():
    seen = {}

    def app(environ, start_response):
        seen.update(environ)
        return []

    before = time.time()
    ArrivalStamp(app, trusted_proxies=[])({"REMOTE_ADDR": "127.0.0.1"}, None)
    assert before <= seen[ARRIVAL_KEY] <= time.time()


def test_the_deadline_counts_from_arrival():
    environ = {ARRIVAL_KEY: time.time() - 0.3}
    remaining = call_deadline(environ, 500) - time.monotonic()
    assert 0.15 < remaining <= 0.2
    assert call_deadline(environ, None) is None


@pytest.mark.parametrize(
    ("value", "parsed"), [("500", 500), (" 7 ", 7), ("0", None), ("12345678901", None), ("x", None)]
)
def test_timeout_header_read_leniently(value, parsed):
    assert timeout_ms({"HTTP_CONNECT_TIMEOUT_MS": value}) == parsed


@pytest.mark.django_db
def test_rpc_deadline_includes_time_before_the_worker_took_the_call(rpc, admin_key, settings):
    """SlowHandler works 0.3 s: within a 500 ms deadline, unless the call already queued for 0.3 s."""
    settings.RPC_SERVICES = [*settings.RPC_SERVICES, TESTING_SERVICE]
    settings.TRUSTED_PROXIES = ["127.0.0.1"]
    queued = {"Connect-Timeout-Ms": "500", "X-Request-Start": f"t={time.time() - 0.3:.3f}"}
    result = rpc(PATH + "SlowHandler", {}, token=admin_key, headers=queued)
    assert result.status == 504 and result.code == "deadline_exceeded"
    assert not Namespace.objects.filter(name="made-after-the-deadline").exists()
    fresh = rpc(PATH + "SlowHandler", {}, token=admin_key, headers={"Connect-Timeout-Ms": "500"})
    assert fresh.status == 200, fresh
