"""When a request reached the service, and the deadline of a call counted from then.

Connect-Timeout-Ms counts from arrival, not from when a worker got round to the request,
so time spent queueing counts against the call. The arrival time is stamped into the WSGI
environ as early as the server allows (`ArrivalStamp`, wrapped around the WSGI app). Behind
the recommended proxy it comes from the proxy's `X-Request-Start` header, which is believed
only when the peer (REMOTE_ADDR) is one of TRUSTED_PROXIES: anyone else could send it.
"""

from __future__ import annotations

import re
import time
from contextvars import ContextVar

from controlplane import proxies

ARRIVAL_KEY = "controlplane.arrival"  # wall-clock seconds since the epoch (time.time())
_TIMEOUT_RE = re.compile(r"[0-9]{1,10}")
_GRPC_TIMEOUT_RE = re.compile(r"([0-9]{1,8})([HMSmun])")
_GRPC_TIMEOUT_UNIT_NANOS = {"H": 3600 * 10**9, "M": 60 * 10**9, "S": 10**9, "m": 10**6, "u": 10**3, "n": 1}

# The deadline (time.monotonic()) of the call being served, computed once where the request
# enters (shedding.LoadSheddingMiddleware) and read everywhere else: the RPC transaction, the
# connection pool's wait, error classification. None when the call has no deadline.
current_deadline: ContextVar[float | None] = ContextVar("current_deadline", default=None)


class ArrivalStamp:
    """WSGI middleware: stamps environ[ARRIVAL_KEY] before Django sees the request."""

    def __init__(self, app, trusted_proxies=None):
        self.app = app
        self.trusted_proxies = trusted_proxies

    def __call__(self, environ, start_response):
        stamp(environ, self.trusted_proxies)
        return self.app(environ, start_response)


def stamp(environ, trusted_proxies=None) -> float:
    """Stamps the arrival time once (the earliest layer wins) and returns it."""
    if ARRIVAL_KEY not in environ:
        environ[ARRIVAL_KEY] = arrival_time(environ, time.time(), trusted_proxies)
    return environ[ARRIVAL_KEY]


def arrival_time(environ, now: float, trusted_proxies=None) -> float:
    """X-Request-Start from a trusted proxy, else `now`; never later than now."""
    header = environ.get("HTTP_X_REQUEST_START")
    if not header or not proxies.is_trusted(environ.get("REMOTE_ADDR", ""), trusted_proxies):
        return now
    started = parse_request_start(header)
    return min(started, now) if started is not None else now


def parse_request_start(value: str) -> float | None:
    """nginx's `t=1700000000.123` (seconds), or bare seconds, milliseconds or microseconds."""
    value = value.strip().removeprefix("t=")
    try:
        number = float(value)
    except ValueError:
        return None
    if number != number or number <= 0:  # NaN or nonsense
        return None
    if number > 1e14:  # microseconds
        return number / 1e6
    if number > 1e11:  # milliseconds
        return number / 1e3
    return number


def timeout_ms(environ) -> int | None:
    """The call's timeout in milliseconds when well-formed and positive, else None (see `_timeout`).

    Malformed values are left to the RPC runtime, which answers invalid_argument for them.
    """
    return _timeout(environ) or None


def request_deadline(environ) -> float | None:
    """The call's deadline: its arrival plus its timeout; a zero timeout has elapsed on arrival."""
    return call_deadline(environ, _timeout(environ))


def call_deadline(environ, timeout_ms: int | None) -> float | None:
    """The call's deadline on time.monotonic()'s clock: arrival + the timeout."""
    if timeout_ms is None:
        return None
    now_wall, now = time.time(), time.monotonic()
    waited = max(0.0, now_wall - environ.get(ARRIVAL_KEY, now_wall))
    return now - waited + timeout_ms / 1000


def _timeout(environ) -> int | None:
    """Connect-Timeout-Ms (an integer of at most 10 digits), or gRPC's and gRPC-Web's grpc-timeout
    (at most 8 digits and a unit, rounded up to whole milliseconds); None when absent or malformed."""
    value = (environ.get("HTTP_CONNECT_TIMEOUT_MS") or "").strip()
    if value:
        return int(value) if _TIMEOUT_RE.fullmatch(value) else None
    grpc = _GRPC_TIMEOUT_RE.fullmatch((environ.get("HTTP_GRPC_TIMEOUT") or "").strip())
    if grpc is None:
        return None
    nanos = int(grpc[1]) * _GRPC_TIMEOUT_UNIT_NANOS[grpc[2]]
    return -(-nanos // 1_000_000)


def remaining_seconds(default: float) -> float:
    """What is left of the current call's deadline, at most `default` and never negative."""
    deadline = current_deadline.get()
    if deadline is None:
        return default
    return max(0.0, min(default, deadline - time.monotonic()))
