"""gunicorn behind nginx (deploy/nginx.conf): `gunicorn -c deploy/gunicorn.conf.py controlplane.wsgi`.

nginx reads each request whole before passing it on and takes each response whole, so a
worker is busy only while Django works: sync workers suffice, and a slow or idle client
costs an nginx connection (a few kB), never a worker. Command-line flags and
GUNICORN_CMD_ARGS override these values.
"""

import glob
import multiprocessing
import os
import shutil
import tempfile

# Only nginx connects: a Unix socket that nothing else can reach.
bind = "unix:/run/controlplane/gunicorn.sock"
# One sync worker per core (bench/LOAD.md): on 2 cores shared with PostgreSQL, more processes
# added memory (~85 MB each) and database connections, not throughput at 16-64 connections; one
# accept queue shared by the workers keeps the tail flattest; gthread's `timeout` cannot stop a
# runaway request.
worker_class = "sync"
workers = multiprocessing.cpu_count()
# Connections nginx has handed over that no worker has accepted yet. When it is full nginx
# gets an immediate refusal and answers 502, instead of requests queueing without bound.
backlog = 64
# A request running longer is killed and its worker replaced (nginx answers 502).
timeout = 30
graceful_timeout = 30
# Recycle workers now and then, so that slow leaks cannot accumulate.
max_requests = 2000
max_requests_jitter = 200
accesslog = "-"
# With LOG_FORMAT=json the service writes one JSON line per request itself (docs/observability.md).
forwarded_allow_ips = "*"  # the socket admits only nginx


def on_starting(server):
    """Reads the settings in the master, so that a bad one is one line and no worker starts."""
    from controlplane.config import check_settings

    check_settings("gunicorn")

    prepare_metrics_directory()


# Metrics (prometheus_client multiprocess mode, docs/observability.md): each worker writes its
# values to files in PROMETHEUS_MULTIPROC_DIR and /metrics adds them up. The directory must be
# empty when the server starts (values of a previous run would be added in), and set before the
# workers import prometheus_client. A dead worker's counters stay in its files, counted once;
# its gauges (connections in use) are removed with it.
_created_directories = []


def prepare_metrics_directory():
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not directory:
        directory = tempfile.mkdtemp(prefix="controlplane-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
        _created_directories.append(directory)
    os.makedirs(directory, exist_ok=True)
    for stale in glob.glob(os.path.join(directory, "*.db")):
        os.remove(stale)


def child_exit(server, worker):
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server):
    for directory in _created_directories:
        shutil.rmtree(directory, ignore_errors=True)
