"""gunicorn behind nginx (deploy/nginx.conf): `gunicorn -c deploy/gunicorn.conf.py controlplane.wsgi`.

nginx reads each request whole before passing it on and takes each response whole, so a
worker is busy only while Django works: sync workers suffice, and a slow or idle client
costs an nginx connection (a few kB), never a worker. Command-line flags and
GUNICORN_CMD_ARGS override these values.
"""

import multiprocessing

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
forwarded_allow_ips = "*"  # the socket admits only nginx


def on_starting(server):
    """Reads the settings in the master, so that a bad one is one line and no worker starts."""
    from controlplane.config import check_settings

    check_settings("gunicorn")
