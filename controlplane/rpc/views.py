"""The single Django view behind every Connect procedure.

Order of checks: route → method → codec → protocol headers → authentication →
body → authorization → handler (inside one transaction, under the call's deadline).
"""

from __future__ import annotations

import json
import logging
import time

from django.conf import settings
from django.db import DatabaseError, transaction
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from controlplane.auth.origin import is_same_origin_request
from controlplane.faults.arrival import call_deadline
from controlplane.faults.database import unavailable_error

from . import protocol
from .codes import Code
from .deadline import database_deadline, is_cancellation
from .errors import Error
from .registry import registry
from .service import Context

logger = logging.getLogger("controlplane.rpc")


@csrf_exempt
def dispatch(request: HttpRequest, service: str, method: str) -> HttpResponse:
    procedure = registry.get(f"{service}/{method}")
    if procedure is None:
        return error_response(request, Error(Code.UNIMPLEMENTED, f"unknown procedure /{service}/{method}"), 404)
    if request.method != "POST":
        response = error_response(request, Error(Code.UNIMPLEMENTED, "Connect unary calls use POST"), 405)
        response["Allow"] = "POST"
        return response
    try:
        codec = protocol.codec_for(request.headers.get("Content-Type", ""))
    except protocol.UnsupportedMediaType:
        return _unsupported_media_type(request, protocol.ACCEPT_POST)

    deadline = None
    try:
        protocol.check_protocol_version(request.headers.get("Connect-Protocol-Version"))
        timeout_ms = protocol.parse_timeout_ms(request.headers.get("Connect-Timeout-Ms"))
        # Counted from the request's arrival, so time spent queueing counts (controlplane/faults).
        deadline = call_deadline(request.META, timeout_ms)
        encoding = protocol.check_content_encoding(request.headers.get("Content-Encoding"))

        principal = request.principal
        if not principal.is_authenticated:
            raise Error.unauthenticated(principal.failure or "a credential is required")
        if principal.via == "session" and not is_same_origin_request(request):
            raise Error.permission_denied("cross-site request refused: Origin is not an allowed origin")
        if principal.via == "session" and codec != protocol.JSON:
            # Cookie-authenticated calls accept only JSON, which browsers cannot send cross-site unpreflighted.
            return _unsupported_media_type(request, "application/json")

        body = protocol.read_body(
            request,
            content_length=_content_length(request),
            encoding=encoding,
            limit=settings.RPC_MAX_REQUEST_BYTES,
        )
        message = procedure.spec.request()
        present = protocol.decode(codec, body, message)
        context = Context(principal=principal, deadline=deadline, present_fields=present)
        reply = _invoke(procedure, message, context)
    except Error as exc:
        return error_response(request, exc)
    except Exception as exc:
        if deadline is not None and time.monotonic() >= deadline:
            return error_response(request, Error.deadline_exceeded())
        outage = unavailable_error(exc)
        if outage is not None:
            # The error's class only: driver messages can carry connection details.
            logger.info("database unavailable in /%s: %s", procedure.path, type(exc.__cause__ or exc).__name__)
            return error_response(request, outage)
        logger.exception("unhandled error in /%s", procedure.path)
        return error_response(request, Error.internal())
    return _encoded_response(request, protocol.encode(codec, reply), protocol.CONTENT_TYPES[codec])


def _invoke(procedure, message, context):
    try:
        with transaction.atomic(), database_deadline(context.deadline):
            procedure.spec.permission.check(context.principal, message)
            reply = procedure.handler(message, context)
            if context.deadline is not None and time.monotonic() > context.deadline:
                # Checked before the commit: a call answered deadline_exceeded changed nothing.
                raise Error.deadline_exceeded()
            return reply
    except DatabaseError as exc:
        if context.deadline is not None and (is_cancellation(exc) or time.monotonic() > context.deadline):
            raise Error.deadline_exceeded() from None
        raise


def error_response(request: HttpRequest, error: Error, status: int | None = None) -> HttpResponse:
    body = json.dumps(error.to_json(), separators=(",", ":")).encode()
    response = _encoded_response(request, body, "application/json", status=status or error.code.http_status)
    if error.retry_after is not None:
        response["Retry-After"] = str(error.retry_after)
    return response


def _encoded_response(request, body: bytes, content_type: str, status: int = 200) -> HttpResponse:
    headers = {"Vary": "Accept-Encoding", "Accept-Encoding": "gzip"}
    if body and protocol.accepts_gzip(request.headers.get("Accept-Encoding")):
        body = protocol.gzip_bytes(body)
        headers["Content-Encoding"] = "gzip"
    return HttpResponse(body, status=status, content_type=content_type, headers=headers)


def _unsupported_media_type(request, accepted: str) -> HttpResponse:
    error = Error.invalid_argument("Content-Type", f"unsupported content type; use {accepted}")
    response = error_response(request, error, 415)
    response["Accept-Post"] = accepted
    return response


def _content_length(request) -> int | None:
    try:
        value = int(request.META.get("CONTENT_LENGTH") or "")
    except ValueError:
        return None
    return value if value >= 0 else None
