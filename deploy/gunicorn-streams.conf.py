"""The streaming pool: `gunicorn -c deploy/gunicorn-streams.conf.py controlplane.wsgi`.

nginx (deploy/nginx.conf) routes the calls that stay open here: WatchJobs and FollowJobLogs
(server streams) and RunnerService (AcquireWork long polls). Everything else goes to the sync
pool (deploy/gunicorn.conf.py). A sync worker serves one connection at a time, so a stream
would pin a whole process for its life (and be killed at `timeout`); gthread gives each open
call a thread, which sleeps on a condition (no database connection held) until NOTIFY wakes
it. docs/streams.md has the capacity figures (open streams per worker, memory per stream).
"""

import runpy
from pathlib import Path

# The sync pool's settings (on_starting, logging, proxies), then what differs.
_base = runpy.run_path(str(Path(__file__).with_name("gunicorn.conf.py")))
on_starting = _base["on_starting"]
accesslog = _base["accesslog"]
forwarded_allow_ips = _base["forwarded_allow_ips"]
backlog = _base["backlog"]

bind = "unix:/run/controlplane/streams.sock"
worker_class = "gthread"
# One process holds hundreds of idle streams (each a sleeping thread); a second one keeps the
# pool serving while the first restarts.
workers = 2
threads = 256  # open streams (and long polls) per worker; more wait in the backlog
# gthread's main loop heartbeats while threads serve, so `timeout` only catches a stuck
# process, never a long stream. Streams end by themselves (STREAM_MAX_SECONDS).
timeout = 30
# On restart, open streams get this long before they are cut (clients resume with their token).
graceful_timeout = 30
# No recycling by request count: each recycle would cut every open stream.
max_requests = 0
