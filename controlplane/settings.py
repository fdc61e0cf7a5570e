"""Settings for the control plane, read from the environment (and an optional .env).

Every knob has the django-environ name you would expect (DATABASE_URL, SECRET_KEY,
DEBUG, ALLOWED_HOSTS, ...). With nothing set, the service runs in DEBUG on a SQLite
file under var/ — the embedded default.
"""

import ipaddress
from pathlib import Path

from controlplane.config import SettingError, StrictEnv, require_secret_key

BASE_DIR = Path(__file__).resolve().parent.parent

# Strict: a malformed value raises SettingError naming the setting and the fix (controlplane/config.py).
env = StrictEnv()
StrictEnv.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env.bool("DEBUG", default=True)

_DEV_SECRET_KEY = "django-insecure-dev-only-key-never-use-in-production-0123456789"
SECRET_KEY = require_secret_key(env.str("SECRET_KEY", default=_DEV_SECRET_KEY if DEBUG else ""))

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "controlplane.apps.ControlPlaneAdminConfig",  # django.contrib.admin, access decided by the principal
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "audit",
    "namespaces",
    "apikeys",
    "workloads",  # app label "containers"
    "runners",
    "uploads",
    "idempotency",
    "axes",  # throttles /admin/login/ failures (docs/operations.md, "Console login throttle")
]

# The request path, in the order it runs (controlplane.rpc.interceptors.request_path lists it):
# every request passes MIDDLEWARE, then an RPC passes RPC_INTERCEPTORS, then its @rpc handler.
MIDDLEWARE = [
    # Around everything: the request id, statements, the request log line and RPC metrics.
    "controlplane.observability.requests.ObservabilityMiddleware",
    # Then: computes the call's deadline from its arrival, and refuses calls past it or queued
    # too long, before any other work.
    "controlplane.faults.shedding.LoadSheddingMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Django's own, except that RPCs with a bearer token skip the ones that serve only the
    # console and cookie calls (controlplane/auth/middleware.py).
    "controlplane.auth.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "controlplane.auth.middleware.CsrfViewMiddleware",
    "controlplane.auth.middleware.AuthenticationMiddleware",
    "controlplane.auth.middleware.PrincipalMiddleware",
    "controlplane.auth.middleware.MessageMiddleware",
    "controlplane.auth.middleware.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # last: turns a lockout into its 429 page
]
# After the view (controlplane.rpc.views.dispatch) hands the call to the connectrpc runtime.
# Those that run before the body is read (metadata interceptors) come first: the runtime runs
# them first whatever the order, so the chain refuses any other order.
RPC_INTERCEPTORS = [
    # Outermost: tracing's server span (when tracing is on), then the call's outcome (its Connect
    # code, whatever inner interceptor or handler ended it) for metrics and the request log.
    "controlplane.rpc.observing.tracing_interceptors",
    "controlplane.rpc.observing.RecordOutcome",
    "controlplane.rpc.interceptors.Authenticate",  # the principal PrincipalMiddleware resolved
    "controlplane.rpc.interceptors.SessionPolicy",  # cookie calls: allowed Origin, JSON only
    "controlplane.rpc.interceptors.MapErrors",  # from here on, the decoded request (noted on the call)
    "controlplane.rpc.interceptors.Validate",
    "controlplane.rpc.interceptors.Transaction",
    "controlplane.rpc.interceptors.Authorize",  # the handler's declared permission
]

ROOT_URLCONF = "controlplane.urls"
WSGI_APPLICATION = "controlplane.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "controlplane.auth.context_processors.sign_in",
            ],
        },
    },
]

# Database: DATABASE_URL, e.g. postgres://user@127.0.0.1:5432/controlplane.
DATABASES = {"default": env.database("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'var' / 'controlplane.sqlite3'}")}
# Faults and overload (docs/faults.md): bounded waits for the database.
DATABASE_POOL_TIMEOUT = env.float("DATABASE_POOL_TIMEOUT", default=3.0)  # seconds a call waits for a connection
DATABASE_POOL_RECONNECT_INTERVAL = env.float("DATABASE_POOL_RECONNECT_INTERVAL", default=0.2)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Django's backend with a pool that bounds waits and reconnects steadily (controlplane/faults/postgresql).
    DATABASES["default"]["ENGINE"] = "controlplane.faults.postgresql"
    # libpq's connect timeout (seconds, at least 2): a database host that does not answer.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault(
        "connect_timeout", env.int("DATABASE_CONNECT_TIMEOUT", default=3)
    )
    # Plan each statement once per connection (docs/performance.md): parameters bound by the
    # server, and psycopg prepares a statement the DATABASE_PREPARE_THRESHOLD+1st time a
    # connection runs it (hot reads: the first time). "off": never prepare (a pooler that
    # cannot carry named prepared statements, e.g. PgBouncer < 1.22 in transaction mode).
    DATABASES["default"]["OPTIONS"].setdefault("server_side_binding", True)
    _threshold = env.str("DATABASE_PREPARE_THRESHOLD", default="2")
    try:
        DATABASES["default"]["OPTIONS"]["prepare_threshold"] = None if _threshold == "off" else int(_threshold)
        if _threshold != "off" and int(_threshold) < 0:
            raise ValueError
    except ValueError:
        raise SettingError(
            f"DATABASE_PREPARE_THRESHOLD={_threshold!r}: set a number of executions (0: at once) or off"
        ) from None
    # psycopg 3 with a connection pool (CONN_MAX_AGE must stay 0 with it).
    if env.bool("DATABASE_POOL", default=True):
        DATABASES["default"]["OPTIONS"]["pool"] = {
            "min_size": env.int("DATABASE_POOL_MIN_SIZE", default=1),
            "max_size": env.int("DATABASE_POOL_MAX_SIZE", default=10),
            "timeout": DATABASE_POOL_TIMEOUT,
        }
        DATABASES["default"]["CONN_MAX_AGE"] = 0
elif DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"transaction_mode": "IMMEDIATE", "timeout": 20, "init_command": "PRAGMA journal_mode=WAL;"}
    )
    # A file, not memory, so that test server processes share the test database.
    DATABASES["default"].setdefault("TEST", {})["NAME"] = str(BASE_DIR / "var" / "test.sqlite3")
# Persistent connections (no pool) are checked before reuse, so a database restart costs no call.
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
FORMAT_MODULE_PATH = ["controlplane.formats"]  # ISO dates in the console
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env.path("STATIC_ROOT", default=BASE_DIR / "var" / "static")

# Sessions: the human credential is the cp_session cookie.
SESSION_COOKIE_NAME = "cp_session"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_AGE = env.int("SESSION_COOKIE_AGE", default=8 * 3600)

# Transport security: secure by default whenever DEBUG is off.
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=not DEBUG)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=not DEBUG)
# The preload directive only states consent; listing still needs a submission to hstspreload.org.
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=not DEBUG)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=not DEBUG)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=not DEBUG)
if env.bool("USE_X_FORWARDED_PROTO", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Django's W002/W003 look for its own middleware paths; controlplane.auth.checks checks ours.
SILENCED_SYSTEM_CHECKS = ["security.W002", "security.W003", *env.list("SILENCED_SYSTEM_CHECKS", default=[])]

# Overload (docs/faults.md). Calls that waited longer than this in the queue
# get `unavailable` at once (0: never); X-Request-Start is believed only from these proxies.
SHED_QUEUE_MS = env.int("SHED_QUEUE_MS", default=5000)
# Addresses or networks, e.g. 127.0.0.1; "unix": the peer on gunicorn's Unix socket (deploy/).
TRUSTED_PROXIES = env.list("TRUSTED_PROXIES", default=[])
try:
    [ipaddress.ip_network(network, strict=False) for network in TRUSTED_PROXIES if network != "unix"]
except ValueError as exc:
    raise SettingError(f"TRUSTED_PROXIES: {exc}; use IP addresses or networks such as 10.0.0.0/8") from None
# requestId (AIP-155) of creating calls: kept at least this long; purge_request_ids deletes older.
REQUEST_ID_RETENTION_HOURS = env.int("REQUEST_ID_RETENTION_HOURS", default=24)

# Connect RPC layer.
RPC_MAX_REQUEST_BYTES = env.int("RPC_MAX_REQUEST_BYTES", default=4 * 1024 * 1024)
# Reflection needs no credential and its questions are a name or two: anything larger is refused
# before it is read (resource_exhausted), and the connection is closed.
RPC_MAX_REFLECTION_REQUEST_BYTES = env.int("RPC_MAX_REFLECTION_REQUEST_BYTES", default=16 * 1024)
# Origins allowed for cookie-authenticated RPCs, beyond the service's own origin.
RPC_ALLOWED_ORIGINS = env.list("RPC_ALLOWED_ORIGINS", default=[])
# Services mounted under /<package>.<Service>/<Method>.
RPC_SERVICES = [
    "controlplane.rpc.identity.IdentityService",
    "namespaces.rpc.NamespaceService",
    "workloads.rpc.jobs.JobService",
    "workloads.rpc.sandboxes.SandboxService",
    "workloads.rpc.environments.EnvironmentService",
    "workloads.rpc.workspaces.WorkspaceService",
    "workloads.rpc.egress.EgressService",
    "runners.rpc.RunnerService",
    "runners.rpc.RunnerAdminService",
    "uploads.rpc.BucketUploadsService",
]

# Workloads run on runners (docs/runners.md), which lease them over containers.runtime.v1.RunnerService.
# Sandboxes and builds are served only where runners can run them; otherwise CreateSandbox and
# BuildEnvironment answer `unimplemented`.
CONTAINERS_SANDBOXES_ENABLED = env.bool("CONTAINERS_SANDBOXES_ENABLED", default=False)
CONTAINERS_BUILDS_ENABLED = env.bool("CONTAINERS_BUILDS_ENABLED", default=False)
# Builds: "always", "missing" or "never" pull the image (handed to the runner as Work.pull_policy).
CONTAINERS_BUILD_PULL_POLICY = env.str("CONTAINERS_BUILD_PULL_POLICY", default="missing")
if CONTAINERS_BUILD_PULL_POLICY not in ("always", "missing", "never"):
    raise SettingError(f"CONTAINERS_BUILD_PULL_POLICY={CONTAINERS_BUILD_PULL_POLICY!r}: use always, missing or never")
# Leases: runners heartbeat every RUNNER_HEARTBEAT_SECONDS; a lease not renewed for
# RUNNER_LEASE_TTL_SECONDS is lost (the job queued again, at most JOBS_MAX_ATTEMPTS runs in all).
RUNNER_HEARTBEAT_SECONDS = env.int("RUNNER_HEARTBEAT_SECONDS", default=10)
RUNNER_LEASE_TTL_SECONDS = env.int("RUNNER_LEASE_TTL_SECONDS", default=40)
if not 1 <= RUNNER_HEARTBEAT_SECONDS < RUNNER_LEASE_TTL_SECONDS:
    raise SettingError("RUNNER_HEARTBEAT_SECONDS must be at least 1 and less than RUNNER_LEASE_TTL_SECONDS")
JOBS_MAX_ATTEMPTS = env.int("JOBS_MAX_ATTEMPTS", default=3)
# RunJob's timeoutSeconds may not exceed this (0 there means no limit).
JOBS_MAX_TIMEOUT_SECONDS = env.int("JOBS_MAX_TIMEOUT_SECONDS", default=86400)
# Seconds between SIGTERM and SIGKILL when a runner stops a cancelled job or a deleted sandbox.
RUNNER_STOP_GRACE_SECONDS = env.int("RUNNER_STOP_GRACE_SECONDS", default=10)
# AcquireWork with nothing to do: where NOTIFY wakes long polls (PostgreSQL), a poll waits up
# to its wait_seconds and looks again every RUNNER_RECHECK_SECONDS (a safety net); elsewhere
# (SQLite) it answers at once, telling the runner to ask again after RUNNER_POLL_SECONDS.
RUNNER_RECHECK_SECONDS = env.float("RUNNER_RECHECK_SECONDS", default=10.0)
RUNNER_POLL_SECONDS = env.int("RUNNER_POLL_SECONDS", default=2)
# A runner's last-seen time is written at most this often (per server process).
RUNNER_LAST_SEEN_RESOLUTION_SECONDS = env.int("RUNNER_LAST_SEEN_RESOLUTION_SECONDS", default=5)
# A job's output is kept up to this many bytes; past it the oldest bytes are dropped.
JOBS_MAX_LOG_BYTES = env.int("JOBS_MAX_LOG_BYTES", default=1024 * 1024)
# Streams (WatchJobs, FollowJobLogs, docs/streams.md): the job change log is kept this long (a
# resume token older than it must start again); a stream ends cleanly after STREAM_MAX_SECONDS
# (the client resumes); a quiet stream sends a bookmark (or an empty log message) every
# STREAM_BOOKMARK_SECONDS, which also tells a gone client from an idle one; the caller's
# credential and permission are checked again every STREAM_AUTH_RECHECK_SECONDS; without
# NOTIFY (SQLite) streams look for changes every STREAM_POLL_SECONDS.
JOBS_WATCH_RETENTION_SECONDS = env.int("JOBS_WATCH_RETENTION_SECONDS", default=3600)
STREAM_MAX_SECONDS = env.float("STREAM_MAX_SECONDS", default=1800.0)
STREAM_BOOKMARK_SECONDS = env.float("STREAM_BOOKMARK_SECONDS", default=15.0)
STREAM_AUTH_RECHECK_SECONDS = env.float("STREAM_AUTH_RECHECK_SECONDS", default=5.0)
STREAM_POLL_SECONDS = env.float("STREAM_POLL_SECONDS", default=1.0)
for _name in ("STREAM_MAX_SECONDS", "STREAM_BOOKMARK_SECONDS", "STREAM_AUTH_RECHECK_SECONDS", "STREAM_POLL_SECONDS"):
    if globals()[_name] <= 0:
        raise SettingError(f"{_name} must be more than 0 seconds")
# Domain under which sandboxes are previewed (https://sbx-<id>.<domain>/); unset: GetPreviewUrl is unimplemented.
CONTAINERS_PREVIEW_DOMAIN = env.str("CONTAINERS_PREVIEW_DOMAIN", default="")
# Egress that GrantEgress always refuses (see namespaces/egress_rules.py): networks
# (CIDR) and host names ("name" exact, ".name" the name and everything below it). Setting
# either replaces its default list, so repeat the defaults when adding to them.
CONTAINERS_EGRESS_DENIED_NETWORKS = env.list(
    "CONTAINERS_EGRESS_DENIED_NETWORKS",
    default=[
        "0.0.0.0/8",  # "this host"; 0.0.0.0 reaches the local host
        "127.0.0.0/8",  # loopback
        "169.254.0.0/16",  # link-local, cloud metadata (169.254.169.254)
        "100.100.100.200/32",  # Alibaba Cloud metadata
        "::/128",
        "::1/128",  # loopback
        "fe80::/10",  # link-local
        "fd00:ec2::254/128",  # AWS metadata over IPv6
        "fd20:ce::254/128",  # Google Cloud metadata over IPv6
    ],
)
CONTAINERS_EGRESS_DENIED_HOSTS = env.list(
    "CONTAINERS_EGRESS_DENIED_HOSTS",
    # A leading dot: the name and every name below it (GCE answers on subdomains of metadata.goog).
    default=[".localhost", "metadata.google.internal", ".metadata.goog", "instance-data.ec2.internal"],
)

# Authenticators (credential → principal). A bearer token goes to the first that accepts it.
BEARER_AUTHENTICATORS = [
    "apikeys.authentication.ApiKeyAuthenticator",
    "controlplane.auth.oidc.authenticator.JwtAuthenticator",  # last: any other token, as an OIDC JWT
]
SESSION_AUTHENTICATOR = "controlplane.auth.authenticators.SessionAuthenticator"
# OIDC groups → {namespace: role}, through the namespaces' group bindings (injected, so that
# authentication does not import the apps built on it).
OIDC_ROLE_RESOLVER = "namespaces.selectors.roles_for_groups"

# Human sign-in (OIDC authorization code flow with PKCE; docs/auth.md).
# Unset OIDC_ISSUER/OIDC_CLIENT_ID: /auth/login answers `unimplemented`, API keys still work.
OIDC_ISSUER = env.str("OIDC_ISSUER", default="")  # exactly as the provider spells its `iss`
OIDC_CLIENT_ID = env.str("OIDC_CLIENT_ID", default="")
OIDC_CLIENT_SECRET = env.str("OIDC_CLIENT_SECRET", default="")
OIDC_SCOPES = env.str("OIDC_SCOPES", default="openid profile email groups")
OIDC_GROUPS_CLAIM = env.str("OIDC_GROUPS_CLAIM", default="groups")
OIDC_ADMIN_SCOPE = env.str("OIDC_ADMIN_SCOPE", default="")  # requested at sign-in; admin only if granted
OIDC_ADMIN_GROUP = env.str("OIDC_ADMIN_GROUP", default="")  # the platform-admin group
# Audiences accepted on bearer JWTs (e.g. the API's resource indicator); default: the client id.
OIDC_AUDIENCES = env.list("OIDC_AUDIENCES", default=[])
OIDC_SESSION_MAX_AGE = env.int("OIDC_SESSION_MAX_AGE", default=SESSION_COOKIE_AGE)  # cap on the ID token's lifetime
OIDC_CLOCK_SKEW_SECONDS = env.int("OIDC_CLOCK_SKEW_SECONDS", default=30)
OIDC_TIMEOUT = env.int("OIDC_TIMEOUT", default=10)  # seconds per call to the provider
# mozilla-django-oidc knobs (fixed: PKCE S256, state and nonce always on; tokens never stored).
OIDC_USE_PKCE = True
OIDC_PKCE_CODE_CHALLENGE_METHOD = "S256"
OIDC_USE_NONCE = True
OIDC_AUTHENTICATION_CALLBACK_URL = "oidc_callback"
OIDC_STORE_ACCESS_TOKEN = False
OIDC_STORE_ID_TOKEN = False
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: refuses a locked-out login before any hashing
    "django.contrib.auth.backends.ModelBackend",  # the break-glass superuser's password
    "controlplane.auth.backends.OidcBackend",  # only ever from /auth/callback
]

# Console login throttle (django-axes): after CONSOLE_LOGIN_FAILURE_LIMIT failed passwords
# for one account, or from one client address, that account or address is refused for
# CONSOLE_LOGIN_COOLOFF_MINUTES. Unlock early: manage.py axes_reset_username <name>.
AXES_ONLY_ADMIN_SITE = True  # OIDC sign-in and the API have their own defences
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_FAILURE_LIMIT = env.int("CONSOLE_LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = env.int("CONSOLE_LOGIN_COOLOFF_MINUTES", default=15) / 60  # hours
AXES_RESET_ON_SUCCESS = True
AXES_ENABLE_ADMIN = False  # its pages would write without a service; use the axes_* commands
AXES_DISABLE_ACCESS_LOG = True  # keep failures only
AXES_VERBOSE = False  # no start-up banner on every manage.py command
AXES_LOCKOUT_TEMPLATE = "admin/locked_out.html"

# API keys: last-used is written at most this often per key.
API_KEY_LAST_USED_RESOLUTION_SECONDS = env.int("API_KEY_LAST_USED_RESOLUTION_SECONDS", default=60)
# Resolved API keys are cached per process on PostgreSQL, evicted at once by NOTIFY when a key
# changes (apikeys.keycache); the lifetime is only a safety net, longer than the runners'
# heartbeat interval so that a heartbeat finds its key cached. 0 turns the cache off.
API_KEY_CACHE_SECONDS = env.int("API_KEY_CACHE_SECONDS", default=60)
API_KEY_CACHE_SIZE = env.int("API_KEY_CACHE_SIZE", default=10000)
# A revocation answers once every process's key cache has applied it, or after this (logged).
API_KEY_REVOCATION_WAIT_SECONDS = env.float("API_KEY_REVOCATION_WAIT_SECONDS", default=2.0)
if API_KEY_CACHE_SECONDS < 0:
    raise SettingError(f"API_KEY_CACHE_SECONDS={API_KEY_CACHE_SECONDS} is negative: set 0 (off) or a number of seconds")
if API_KEY_CACHE_SIZE < 1:
    raise SettingError(
        f"API_KEY_CACHE_SIZE={API_KEY_CACHE_SIZE} must be at least 1 (API_KEY_CACHE_SECONDS=0 turns it off)"
    )

# Operations (docs/observability.md). /metrics answers a scraper sending
# `Authorization: Bearer <METRICS_BEARER_TOKEN>`, or any request from METRICS_ALLOWED_NETWORKS
# (addresses or CIDRs of the direct peer); everyone else gets 401 (a token is set) or 403.
METRICS_BEARER_TOKEN = env.str("METRICS_BEARER_TOKEN", default="")
METRICS_ALLOWED_NETWORKS = env.list("METRICS_ALLOWED_NETWORKS", default=[])
try:
    [ipaddress.ip_network(network, strict=False) for network in METRICS_ALLOWED_NETWORKS]
except ValueError as exc:
    raise SettingError(f"METRICS_ALLOWED_NETWORKS: {exc}; use addresses or networks such as 10.0.0.0/8") from None
# Values read from the database at scrape time, each kept this long (seconds) per process.
METRICS_COLLECTORS = [
    "workloads.metrics.JobQueueCollector",
    "workloads.metrics.WorkCollector",
    "runners.metrics.RunnerCollector",
]
METRICS_QUERY_CACHE_SECONDS = env.float("METRICS_QUERY_CACHE_SECONDS", default=5.0)
# Logs: "plain" text (the default) or "json", one object per line. LOG_REQUESTS: a line per
# request (request id, trace id, procedure, code, duration, ...); on by default with json.
LOG_FORMAT = env.str("LOG_FORMAT", default="plain").strip().lower()
if LOG_FORMAT not in ("plain", "json"):
    raise SettingError(f"LOG_FORMAT={LOG_FORMAT!r} is not a log format: set it to plain or json.")
LOG_REQUESTS = env.bool("LOG_REQUESTS", default=LOG_FORMAT == "json")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request": {"()": "controlplane.observability.logs.RequestContext"},
        "not_implemented": {"()": "controlplane.logs.NotImplementedIsAWarning"},
    },
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "controlplane.observability.logs.JsonFormatter"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT, "filters": ["request"]},
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {
        # Django's default LOGGING gives `django` a console handler of its own while DEBUG; with the
        # root's, every warning printed twice. One handler: the root's.
        "django": {"handlers": [], "level": "INFO"},
        "django.request": {"filters": ["not_implemented"]},
        "django.db.backends": {"level": "WARNING"},
        # psycopg.pool warns at every reconnect attempt; controlplane.faults logs an outage's start and end.
        "psycopg.pool": {"level": "ERROR"},
    },
}
