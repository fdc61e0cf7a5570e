"""Exceptions raised while serving a call → the Connect error the caller sees.

`to_connect_error` is the only place the runtime turns an exception into a Connect error:
service errors keep their code, message, details and headers; anything else is classified
(controlplane.faults.classify): past the deadline, a database outage, or a bug.
"""

from __future__ import annotations

import logging

from connectrpc.errors import ConnectError
from connectrpc.request import RequestContext

from controlplane.connect_errors import connect_error
from controlplane.errors import Code, Error
from controlplane.faults.classify import classify
from controlplane.observability import metrics

logger = logging.getLogger("controlplane.rpc")


def to_connect_error(exc: Exception, ctx: RequestContext | None = None) -> ConnectError:
    """`exc` as a Connect error; the error's headers (`Error.meta`) go on the call's response.

    A bug is logged with its traceback and answered `internal` with nothing of its text (it
    may hold secrets).
    """
    if isinstance(exc, ConnectError):
        return exc
    error = exc if isinstance(exc, Error) else _classified(exc, ctx)
    if ctx is not None:
        for name, value in error.meta.items():
            ctx.response_headers[name] = value
    return connect_error(error)


def _classified(exc: Exception, ctx: RequestContext | None) -> Error:
    error = classify(exc)
    procedure = f"{ctx.method.service_name}/{ctx.method.name}" if ctx is not None else ""
    if error.code is Code.UNAVAILABLE:
        metrics.record_database_unavailable()
        # The error's class only: driver messages can carry connection details.
        logger.info("database unavailable in /%s: %s", procedure, type(exc.__cause__ or exc).__name__)
    elif error.code is Code.INTERNAL:
        logger.error("unhandled error in /%s", procedure, exc_info=exc)
    return error
