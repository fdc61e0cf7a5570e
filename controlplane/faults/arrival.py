"""When a request reached the service, and the deadline of a call counted from then.

Connect-Timeout-Ms counts from arrival, not from when a worker got round to the request,
so time spent queueing counts against the call. The arrival time is stamped into the WSGI
environ as early as the server allows (`ArrivalStamp`, wrapped around the WSGI app). Behind
the recommended proxy it comes from the proxy's `X-Request-Start` header, which is believed
only when the peer (REMOTE_ADDR) is one of TRUSTED_PROXIES: anyone else could send it.
"""

from __future__ import annotations

import ipaddress
import re
import time
from contextvars import ContextVar

UNIX_SOCKET = "unix"  # in TRUSTED_PROXIES: the peer on gunicorn's Unix socket (the proxy)
ARRIVAL_KEY = "controlplane.arrival"  # wall-clock seconds since the epoch (time.time())
_TIMEOUT_RE = re.compile(r"[0-9]{1,10}")

# The deadline (time.monotonic()) of the call being served, for code far from the request
# such as the connection pool's wait; None when the call has no deadline.
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
    if not header or not _is_trusted(environ.get("REMOTE_ADDR", ""), trusted_proxies):
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
    """Connect-Timeout-Ms when well-formed (a positive integer of at most 10 digits), else None.

    Malformed values are left to the RPC layer, which answers invalid_argument for them.
    """
    value = (environ.get("HTTP_CONNECT_TIMEOUT_MS") or "").strip()
    if not _TIMEOUT_RE.fullmatch(value) or int(value) == 0:
        return None
    return int(value)


def call_deadline(environ, timeout_ms: int | None) -> float | None:
    """The call's deadline on time.monotonic()'s clock: arrival + Connect-Timeout-Ms."""
    if not timeout_ms:
        return None
    now_wall, now = time.time(), time.monotonic()
    waited = max(0.0, now_wall - environ.get(ARRIVAL_KEY, now_wall))
    return now - waited + timeout_ms / 1000


def remaining_seconds(default: float) -> float:
    """What is left of the current call's deadline, at most `default` and never negative."""
    deadline = current_deadline.get()
    if deadline is None:
        return default
    return max(0.0, min(default, deadline - time.monotonic()))


def is_trusted_peer(environ) -> bool:
    """Whether the request came through one of TRUSTED_PROXIES, whose headers may be believed."""
    return _is_trusted(environ.get("REMOTE_ADDR", ""), None)


def _is_trusted(address: str, trusted_proxies) -> bool:
    if trusted_proxies is None:
        from django.conf import settings

        trusted_proxies = settings.TRUSTED_PROXIES
    if not trusted_proxies:
        return False
    if not address:
        # A Unix-socket peer (gunicorn leaves REMOTE_ADDR empty): trusted only when the socket is
        # listed as "unix", i.e. its file permissions admit the proxy alone (deploy/).
        return UNIX_SOCKET in trusted_proxies
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in ipaddress.ip_network(net, strict=False) for net in trusted_proxies if net != UNIX_SOCKET)
