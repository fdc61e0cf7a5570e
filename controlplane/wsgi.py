"""WSGI entry point (gunicorn controlplane.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")

from controlplane.faults.arrival import ArrivalStamp

# The arrival time is stamped before Django's own work, so deadlines count from it.
application = ArrivalStamp(get_wsgi_application())
