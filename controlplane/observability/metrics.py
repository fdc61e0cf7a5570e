"""The Prometheus instruments, and the small functions the service calls to record into them.

Works in both of prometheus_client's modes: in one process (runserver) values live in memory;
under gunicorn, deploy/gunicorn.conf.py sets PROMETHEUS_MULTIPROC_DIR before the workers
start, each worker writes its values to its own files there, and a scrape adds them all up
(exposition.py), a dead worker's counters included. Labels are bounded sets only: procedure
names the service serves, Connect codes, authenticator names; never a key id, a user or a
namespace.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

# Seconds: from a cached read (~1 ms) to the request timeout (30 s, deploy/gunicorn.conf.py).
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
# Bytes on the wire (compressed as sent), up to RPC_MAX_REQUEST_BYTES' default of 4 MiB.
SIZE_BUCKETS = (64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304)
# Statements per request: a cached read makes 0-2; more than a dozen smells of N+1.
STATEMENT_BUCKETS = (0, 1, 2, 3, 4, 6, 8, 12, 16, 25, 50, 100)
POOL_WAIT_BUCKETS = (0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)

_PROCEDURE = ("service", "method")

RPC_REQUESTS = Counter("rpc_server_requests", "RPCs answered, by procedure and Connect code.", (*_PROCEDURE, "code"))
RPC_DURATION = Histogram(
    "rpc_server_duration_seconds",
    "Time to answer an RPC (rpc.server.duration), by procedure and Connect code.",
    (*_PROCEDURE, "code"),
    buckets=LATENCY_BUCKETS,
)
RPC_REQUEST_SIZE = Histogram(
    "rpc_server_request_size_bytes", "Request body size of RPCs.", _PROCEDURE, buckets=SIZE_BUCKETS
)
RPC_RESPONSE_SIZE = Histogram(
    "rpc_server_response_size_bytes", "Response body size of RPCs.", _PROCEDURE, buckets=SIZE_BUCKETS
)
RPC_STATEMENTS = Histogram(
    "rpc_server_db_statements", "SQL statements an RPC ran.", _PROCEDURE, buckets=STATEMENT_BUCKETS
)
AUTHENTICATIONS = Counter(
    "controlplane_authentications",
    "Credentials checked, by authenticator (api_key, oidc_jwt, session, bearer) and result.",
    ("authenticator", "result"),
)
KEY_CACHE = Counter(
    "controlplane_apikey_cache_events", "API key cache lookups (hit, miss) and invalidations.", ("event",)
)
REFUSALS = Counter(
    "controlplane_requests_refused",
    "Requests refused before any work: shed (queued past SHED_QUEUE_MS) or deadline (already expired).",
    ("reason",),
)
UNAVAILABLE = Counter(
    "controlplane_unavailable_answers",
    "Answers `unavailable` with Retry-After, by cause (database outage, shed).",
    ("cause",),
)
POOL_SIZE = Gauge("controlplane_db_pool_connections", "Connections the pools hold.", multiprocess_mode="livesum")
POOL_IN_USE = Gauge(
    "controlplane_db_pool_connections_in_use", "Connections lent out by the pools.", multiprocess_mode="livesum"
)
POOL_WAITING = Gauge(
    "controlplane_db_pool_waiting", "Requests waiting for a pool connection.", multiprocess_mode="livesum"
)
POOL_WAIT = Histogram(
    "controlplane_db_pool_wait_seconds", "Time a request waited for a pool connection.", buckets=POOL_WAIT_BUCKETS
)
# The runners' work: counted where it is decided, once the deciding transaction commits.
WORK_KINDS = ("job", "sandbox", "build")
JOB_OUTCOMES = ("succeeded", "failed", "cancelled")
LEASE_EXPIRIES = Counter(
    "controlplane_lease_expiries", "Leases lost because their runner did not renew them in time, by kind.", ("kind",)
)
JOB_OUTCOME = Counter("controlplane_job_outcomes", "Jobs that reached a final state, by that state.", ("outcome",))
HEARTBEATS = Counter(
    "controlplane_runner_heartbeats", "Runner heartbeats: ok (lease renewed) or not_held (lost).", ("result",)
)

_HIT, _MISS, _INVALIDATION = (KEY_CACHE.labels(event) for event in ("hit", "miss", "invalidation"))
# Every child exists from the start, so a rate() has its zero before the first event.
_EXPIRIES = {kind: LEASE_EXPIRIES.labels(kind) for kind in WORK_KINDS}
_OUTCOMES = {outcome: JOB_OUTCOME.labels(outcome) for outcome in JOB_OUTCOMES}
_HEARTBEAT_OK, _HEARTBEAT_NOT_HELD = HEARTBEATS.labels("ok"), HEARTBEATS.labels("not_held")


class _Instruments:
    """The label children of one procedure and code, looked up once per process."""

    __slots__ = ("count", "duration", "request_size", "response_size", "statements")

    def __init__(self, service: str, method: str, code: str):
        self.count = RPC_REQUESTS.labels(service, method, code)
        self.duration = RPC_DURATION.labels(service, method, code)
        self.request_size = RPC_REQUEST_SIZE.labels(service, method)
        self.response_size = RPC_RESPONSE_SIZE.labels(service, method)
        self.statements = RPC_STATEMENTS.labels(service, method)


_instruments: dict[tuple[str, str, str], _Instruments] = {}


def record_rpc(
    service: str, method: str, code: str, seconds: float, request_bytes: int, response_bytes: int, statements: int
) -> None:
    """One answered RPC. `service`/`method` must be a served procedure (bounded)."""
    key = (service, method, code)
    instruments = _instruments.get(key)
    if instruments is None:
        instruments = _instruments[key] = _Instruments(service, method, code)
    instruments.count.inc()
    instruments.duration.observe(seconds)
    instruments.request_size.observe(request_bytes)
    instruments.response_size.observe(response_bytes)
    instruments.statements.observe(statements)


_authentications: dict[tuple[str, str], Counter] = {}


def record_authentication(authenticator: str, result: str) -> None:
    key = (authenticator, result)
    child = _authentications.get(key)
    if child is None:
        child = _authentications[key] = AUTHENTICATIONS.labels(authenticator, result)
    child.inc()


def record_key_cache(hit: bool) -> None:
    (_HIT if hit else _MISS).inc()


def record_key_cache_invalidation() -> None:
    _INVALIDATION.inc()


def record_refusal(reason: str) -> None:
    """`reason`: "shed" (answered unavailable) or "deadline" (answered deadline_exceeded)."""
    REFUSALS.labels(reason).inc()
    if reason == "shed":
        UNAVAILABLE.labels("shed").inc()


def record_database_unavailable() -> None:
    UNAVAILABLE.labels("database").inc()


_pool_size = [-1]  # the value last set, so that an unchanged size costs no write


def record_pool_checkout(pool_size: int, waited: float) -> None:
    """A connection lent out after `waited` seconds (see faults/postgresql)."""
    POOL_WAIT.observe(waited)
    POOL_IN_USE.inc()
    record_pool_size(pool_size)


def record_pool_return(pool_size: int) -> None:
    POOL_IN_USE.dec()
    record_pool_size(pool_size)


def record_pool_size(pool_size: int) -> None:
    if pool_size != _pool_size[0]:
        _pool_size[0] = pool_size
        POOL_SIZE.set(pool_size)


def record_lease_expiries(kind: str, count: int) -> None:
    """`kind`: one of WORK_KINDS. Call once the transaction that lost the leases commits."""
    _EXPIRIES[kind].inc(count)


def record_job_outcome(outcome: str) -> None:
    """`outcome`: one of JOB_OUTCOMES. Call once the transaction that finished the job commits."""
    _OUTCOMES[outcome].inc()


def record_heartbeat(held: bool) -> None:
    (_HEARTBEAT_OK if held else _HEARTBEAT_NOT_HELD).inc()
