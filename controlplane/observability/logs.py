"""Log formats: plain text (the default, `make run`) or one JSON object per line (LOG_FORMAT=json).

Every record made while a request is served carries its request id and trace id (the filter),
so an error's traceback can be found from the X-Request-Id a client reports.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import orjson
from pythonjsonlogger.orjson import OrjsonFormatter

from . import requests, tracing

REQUEST_FIELDS = "request_fields"  # a record attribute: the request line's fields, as they are logged


class RequestContext(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        observation = requests.current()
        if not hasattr(record, "request_id"):
            record.request_id = observation.request_id if observation else ""
        if not getattr(record, "trace_id", ""):
            record.trace_id = tracing.current_trace_id() if tracing.enabled() else ""
        # django.request and django.server attach the request (or a socket): its repr holds
        # the query string, which may carry an OAuth code. The path is enough. (django.request
        # logs 4xx/5xx after the middleware has returned: the request still knows its id.)
        request = getattr(record, "request", None)
        if request is not None and not isinstance(request, str):  # not already done by another handler
            record.request_id = record.request_id or getattr(request, "request_id", "")
            record.request = getattr(request, "path", "")
        return True


class JsonFormatter(OrjsonFormatter):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("rename_fields", {"asctime": "time", "levelname": "level", "name": "logger"})
        kwargs.setdefault("timestamp", False)
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s", *args, **kwargs)

    def format(self, record):
        # The request line (requests.log_request) brings its fields ready: written at once, the
        # same object python-json-logger would write, in a third of the time.
        fields = getattr(record, REQUEST_FIELDS, None)
        if fields is None:
            return super().format(record)
        head = {"time": self.formatTime(record), "level": record.levelname, "logger": record.name}
        return orjson.dumps({**head, "message": record.getMessage(), **fields}).decode()

    def formatTime(self, record, datefmt=None):
        # RFC 3339 in UTC with milliseconds, what log pipelines parse without configuration.
        return datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
