"""WSGI entry point (gunicorn controlplane.wsgi)."""

import os
import sys

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

from controlplane.config import SettingError
from controlplane.faults.arrival import ArrivalStamp
from controlplane.observability import tracing

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")

try:
    # The arrival time is stamped before Django's own work, so deadlines count from it.
    application = ArrivalStamp(get_wsgi_application())
except SettingError as error:
    print(f"controlplane.wsgi: configuration error: {error}", file=sys.stderr)
    # 4 is gunicorn's "app failed to load": the arbiter stops instead of respawning workers.
    raise SystemExit(4) from None

# Traces when OTEL_* ask for them: here, in each worker after gunicorn's fork, because the
# SDK's export thread does not survive a fork.
tracing.setup()

# Import the URLconf (every RPC service with its descriptors) while the worker boots, not in
# the first request each worker serves, which would otherwise take ~0.4 s longer.
get_resolver().url_patterns  # noqa: B018
