"""`make run`'s WSGI entry point: the service, plus the console's static files while DEBUG
(what `runserver` did; production serves them from STATIC_ROOT behind nginx)."""

from django.conf import settings
from django.contrib.staticfiles.handlers import StaticFilesHandler

from controlplane.wsgi import application as service

application = StaticFilesHandler(service) if settings.DEBUG else service
