"""`make run`'s server, for development on a laptop (production: deploy/gunicorn.conf.py).

gunicorn's gthread worker serves HTTP/1.1 and cleartext HTTP/2 (h2c) on one port, so every
documented client works against the first command: curl, the SDK and cpctl, browsers, and
`buf curl`, whose server reflection needs HTTP/2. Code changes restart the worker (`reload`).
Requests are logged to var/log/requests.log; the terminal keeps warnings and errors.
"""

import os

bind = f"127.0.0.1:{os.environ.get('PORT', '8000')}"
wsgi_app = "controlplane.devwsgi:application"
worker_class = "gthread"
workers = 1
threads = 4
http_protocols = "h1,h2"
http2_cleartext = "both"
forwarded_allow_ips = "127.0.0.1"  # only these peers may speak h2c
reload = True
timeout = 60
accesslog = "var/log/requests.log"
errorlog = "-"
loglevel = "warning"
pidfile = f"var/run-{os.environ.get('PORT', '8000')}.pid"  # `make stop`


def on_starting(server):
    """Reads the settings in the master, so that a bad one is one line and no worker starts."""
    from controlplane.config import check_settings

    check_settings("make run")


def when_ready(server):
    port = os.environ.get("PORT", "8000")
    print(
        f"make run: serving http://127.0.0.1:{port}/ (HTTP/1.1 and h2c), restarting on code changes; "
        f"requests are logged to var/log/requests.log; stop with Ctrl-C, or `make stop` when in the background",
        flush=True,
    )
