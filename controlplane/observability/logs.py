"""Log formats: plain text (the default, `make run`) or one JSON object per line (LOG_FORMAT=json).

Every record made while a request is served carries its request id and trace id (the filter),
so an error's traceback can be found from the X-Request-Id a client reports.
"""

from __future__ import annotations

import logging
import math
import time

import orjson
from pythonjsonlogger.orjson import OrjsonFormatter

from . import context, tracing

REQUEST_FIELDS = "request_fields"  # a record attribute: the request line's fields, as they are logged
REQUEST_MESSAGE = "%s %s %s %s %.1fms"  # method, path, status, code, duration


class RequestContext(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        observation = context.current()
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
        return request_line(record.created, record.levelname, record.name, record.getMessage(), fields)

    def formatTime(self, record, datefmt=None):
        return rfc3339(record.created)


_second: tuple[int, str] = (-1, "")  # the last second formatted, and its text


def rfc3339(created: float) -> str:
    """RFC 3339 in UTC with milliseconds, what log pipelines parse without configuration;
    as datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds") writes it, with
    the seconds formatted once per second (a fifth of the time)."""
    global _second
    fraction, whole = math.modf(created)
    micros = round(fraction * 1e6)  # rounded as datetime.fromtimestamp rounds
    if micros >= 1_000_000:
        whole, micros = whole + 1, micros - 1_000_000
    second = _second  # one read: another thread may replace it meanwhile
    if second[0] != whole:
        second = _second = (whole, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)))
    return f"{second[1]}.{micros // 1000:03d}Z"


def request_line(created: float, level: str, logger: str, message: str, fields: dict) -> str:
    head = {"time": rfc3339(created), "level": level, "logger": logger}
    return orjson.dumps({**head, "message": message, **fields}).decode()


def write_request_line(logger: logging.Logger, created: float, message_args: tuple, fields: dict) -> bool:
    """Writes the request line straight to the stream of LOG_FORMAT=json's one console handler,
    as that handler would; False when the logger's handlers are anything else (the caller then
    logs a record). A record, its handling and formatting cost ~80 µs of a 1.5 ms call (measured
    in place, bench/observability_bench.py); this, a tenth of it."""
    handler = _only_json_stream_handler(logger)
    if handler is None:
        return False
    line = request_line(created, "INFO", logger.name, REQUEST_MESSAGE % message_args, fields)
    with handler.lock:
        try:
            handler.stream.write(line + handler.terminator)
            handler.flush()
        except Exception:  # the record's path reports it (Handler.handleError)
            return False
    return True


def _only_json_stream_handler(logger: logging.Logger) -> logging.StreamHandler | None:
    """The handler when the line would reach exactly one: a plain StreamHandler (not a subclass,
    which may write differently) with this formatter, only RequestContext filters (the line
    carries its ids already), and no filters on the way."""
    found = None
    node = logger
    while node is not None:
        if node.filters:
            return None
        for handler in node.handlers:
            if found is not None or handler.level > logging.INFO:
                return None
            found = handler
        node = node.parent if node.propagate else None
    if (
        type(found) is not logging.StreamHandler
        or not isinstance(found.formatter, JsonFormatter)
        or not all(isinstance(f, RequestContext) for f in found.filters)
    ):
        return None
    return found
