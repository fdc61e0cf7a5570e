"""One observation per HTTP request: its id, the statements it ran, its log line and, for an
RPC, its metrics.

`ObservabilityMiddleware` comes first in MIDDLEWARE, so everything after it (shedding,
authentication, the RPC view) runs inside the observation; the RPC layer fills in what only
it knows (`note_rpc`, rpc/observing.py). The per-request work is a handful of attribute
writes and, at the end, `finish` (the metrics, and the log line: straight to the stream of
LOG_FORMAT=json's console handler when that is its only handler, see logs.write_request_line).
"""

from __future__ import annotations

import logging
import os
import re
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections

from controlplane.proxies import is_trusted_peer

from . import logs, metrics
from .context import observation as _observation

REQUEST_ID_HEADER = "X-Request-Id"
# What a proxy's request id may look like (nginx's $request_id is 32 hex digits; UUIDs; ...).
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:+=/-]{1,128}")
# Connect's code for an HTTP status the runtime answered without a Connect error (the spec's table).
_HTTP_CODES = {
    400: "internal",
    401: "unauthenticated",
    403: "permission_denied",
    404: "unimplemented",
    429: "unavailable",
    502: "unavailable",
    503: "unavailable",
    504: "unavailable",
}

logger = logging.getLogger("controlplane.request")


@dataclass(slots=True, eq=False)
class Observation:
    request_id: str
    started: float  # time.perf_counter()
    statements: int = 0
    # Set for RPCs of a served procedure (note_rpc) and by the interceptors.
    service: str = ""
    method: str = ""
    code: str = ""
    principal: str = ""  # Principal.describe(): a label, never a credential
    namespace: str = ""
    trace_id: str = ""
    request_bytes: int = 0
    response_bytes: int = 0


def _count_statement(execute, sql, params, many, context):
    """A Django execute wrapper, installed once per connection: counts the request's statements."""
    observation = _observation.get()
    if observation is not None:
        observation.statements += 1
    return execute(sql, params, many, context)


def _counting(connection) -> None:
    # Installed for good rather than pushed per request (a context manager: ~9 µs a call).
    # First in the list: Django's execute_wrapper() pops the last one when its block ends.
    if _count_statement not in connection.execute_wrappers:
        connection.execute_wrappers.insert(0, _count_statement)


def request_id(environ) -> str:
    """The trusted proxy's X-Request-Id when it has a sane form, else a new one."""
    given = environ.get("HTTP_X_REQUEST_ID")
    if given and _REQUEST_ID.fullmatch(given) and is_trusted_peer(environ):
        return given
    return os.urandom(16).hex()  # as random as a UUID4, in a fifth of the time


class ObservabilityMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        observation = Observation(request_id(request.META), time.perf_counter())
        request.request_id = observation.request_id  # for lines logged after we return (logs.py)
        _counting(connections[DEFAULT_DB_ALIAS])
        token = _observation.set(observation)
        try:
            response = self.get_response(request)
        finally:
            _observation.reset(token)
        response[REQUEST_ID_HEADER] = observation.request_id
        if response.streaming and observation.service and not response.is_async:
            # An RPC's server stream runs after this returns, as the server sends it: observed to
            # its end, so its code, duration, statements and bytes are the whole stream's. (Other
            # streaming responses, files among them, keep their own iterators.)
            response.streaming_content = _observed(response.streaming_content, observation, request, response)
        else:
            finish(observation, request, response)
        return response


_END = object()


def _observed(chunks, observation: Observation, request, response):
    ended = False
    try:
        while True:
            token = _observation.set(observation)
            try:
                chunk = next(chunks, _END)
            finally:
                _observation.reset(token)
            if chunk is _END:
                ended = True
                return
            observation.response_bytes += len(chunk)
            yield chunk
    finally:
        if not ended and not observation.code:
            observation.code = "canceled"  # the client went away (or the server stopped sending)
        finish(observation, request, response)


def note_rpc(service: str, method: str, request_bytes: int, response_bytes: int = 0) -> None:
    """Called by the RPC view for a served procedure: its metrics are recorded at the end (a
    server stream's when it ends, its bytes counted as they are sent)."""
    observation = _observation.get()
    if observation is not None:
        observation.service, observation.method = service, method
        observation.request_bytes, observation.response_bytes = request_bytes, response_bytes


def finish(observation: Observation, request, response) -> None:
    seconds = time.perf_counter() - observation.started
    if observation.service:
        if not observation.code:  # refused by the runtime before the interceptors ran
            observation.code = "ok" if response.status_code == 200 else _HTTP_CODES.get(response.status_code, "unknown")
        metrics.record_rpc(
            observation.service,
            observation.method,
            observation.code,
            seconds,
            observation.request_bytes,
            observation.response_bytes,
            observation.statements,
        )
    if settings.LOG_REQUESTS:
        log_request(observation, request, response.status_code, seconds)


def log_request(observation: Observation, request, status: int, seconds: float) -> None:
    if not logger.isEnabledFor(logging.INFO):
        return
    # Made directly, not with logger.info(), which would also walk the stack for the caller's
    # file and line.
    procedure = f"{observation.service}/{observation.method}" if observation.service else ""
    message_args = (request.method, request.path, status, observation.code or "-", seconds * 1000)
    # One attribute (logs.REQUEST_FIELDS): the JSON formatter writes them as they are.
    fields = {
        "request_id": observation.request_id,
        "http_method": request.method,
        "path": request.path,  # never the query string: it may carry an OAuth code
        "status": status,
        "procedure": procedure,
        "code": observation.code,
        "duration_ms": round(seconds * 1000, 3),
        "principal": observation.principal,
        "namespace": observation.namespace,
        "statements": observation.statements,
        "request_bytes": observation.request_bytes,
        "response_bytes": observation.response_bytes,
        "trace_id": observation.trace_id,
    }
    created = time.time()
    if logs.write_request_line(logger, created, message_args, fields):
        return
    extra = {"request_id": observation.request_id, "trace_id": observation.trace_id, logs.REQUEST_FIELDS: fields}
    record = logger.makeRecord(
        logger.name, logging.INFO, __file__, 0, logs.REQUEST_MESSAGE, message_args, None, extra=extra
    )
    record.created, record.msecs = created, (created - int(created)) * 1000
    logger.handle(record)
