"""The one Django view behind every RPC: hands the request to the connectrpc runtime.

Django's middleware has already run (PrincipalMiddleware attached request.principal); the
runtime negotiates the protocol (Connect, gRPC-Web), codec and compression, reads the body,
and runs the interceptor chain (interceptors.py) around the handler.
"""

from __future__ import annotations

from connectrpc.code import Code
from connectrpc.errors import ConnectError
from django.conf import settings
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt

from controlplane.connect_errors import error_response
from controlplane.observability.requests import note_rpc

from .context import serving
from .reflection import REFLECTION_SERVICES
from .registry import registry

# gRPC needs HTTP trailers: the WSGI trailers extension, or gunicorn's own over HTTP/2.
_SEND_TRAILERS = ("wsgi.ext.http.send_trailers", "gunicorn.http2.send_trailers")
ACCEPT_POST = (
    "application/json, application/proto, application/grpc-web+proto, application/grpc-web+json, "
    "application/connect+proto, application/connect+json"
)


@csrf_exempt
def dispatch(request: HttpRequest, service: str, method: str) -> HttpResponse:
    application = registry.get(service)
    if application is None:
        return HttpResponse(status=404)  # what the runtime answers for an unknown method too
    send_trailers = next((request.environ[k] for k in _SEND_TRAILERS if k in request.environ), None)
    if _is_grpc(request.content_type) and send_trailers is None:
        # gRPC proper over HTTP/1.1 (or a server without trailers): Connect and gRPC-Web work here.
        return HttpResponse(status=415, headers={"Accept-Post": ACCEPT_POST})
    # A server-reflection call: a bidirectional stream, answered while the request stream is read.
    reflection = service in REFLECTION_SERVICES
    # Reflection is anonymous: its small limit bounds what an unauthenticated caller makes us read.
    # (+5: the one envelope's prefix.)
    most = settings.RPC_MAX_REFLECTION_REQUEST_BYTES + 5 if reflection else settings.RPC_MAX_REQUEST_BYTES
    limit = most + 1 if _has_body(request) else 0
    # Over HTTP/2 reflection's request-stream reader must not wait for more than the client has
    # sent: it may be waiting for our answer before it sends more (grpc reflection clients do).
    # Over HTTP/1.1 the client sends its whole body first, so reads can be large.
    step = 1 if reflection and not request.environ.get("SERVER_PROTOCOL", "").startswith("HTTP/1") else None
    # Reflection and server streams (WatchJobs, ...) answer message by message, as they come.
    served = registry.methods.get(f"{service}/{method}")
    streams_out = reflection or (served is not None and served.server_streaming)
    body = DrainLimitedInput(request.environ["wsgi.input"], limit, step=step)
    environ = {
        **request.environ,
        "wsgi.input": body,
        # Mounted anywhere in the URLconf, the runtime routes on the procedure's own path.
        "SCRIPT_NAME": "",
        "PATH_INFO": f"/{service}/{method}",
        "wsgi.ext.http.send_trailers": send_trailers,
    }
    started = {}

    def start_response(status, headers, exc_info=None):
        started.update(status=int(status.split(" ", 1)[0]), headers=headers)

    try:
        with serving(request):
            chunks = application(environ, start_response)
            if not streams_out:
                content = b"".join(chunks)
    except ConnectError:
        if not body.malformed:  # only the body's own error escapes the runtime (its drain after an error)
            raise
    if body.malformed:
        # Below the protocol: whatever the runtime made of it, the body was never read.
        response = error_response(body.malformed)
    elif streams_out:
        response = StreamingHttpResponse(chunks, status=started["status"])
        response["X-Accel-Buffering"] = "no"  # nginx passes each message on as it comes
        if served is not None:
            note_rpc(service, method, body.limit - body.remaining)
    else:
        response = HttpResponse(content, status=started["status"])
        if served is not None:  # a served procedure: a bounded label
            note_rpc(service, method, body.limit - body.remaining, len(content))
        if response.status_code >= 500:
            response._has_been_logged = True  # errors.to_connect_error logged it once already
    for name, value in () if body.malformed else started["headers"]:
        if value != "identity":  # content-encoding: identity says nothing (connect-go leaves it out)
            response[name] = value
    # Authenticated answers (Connect GET included) are for this caller only.
    response["Cache-Control"] = "private, no-store"
    if body.abandoned and not request.environ.get("SERVER_SOFTWARE", "").startswith("WSGIServer/"):
        # More body than we drain: the connection cannot carry another request. (wsgiref, i.e.
        # runserver, refuses hop-by-hop headers from applications and closes on its own.)
        response["Connection"] = "close"
    return response


def _has_body(request: HttpRequest) -> bool:
    # HTTP/1.x: without Content-Length or Transfer-Encoding a request has no body (RFC 9112 §6.3).
    environ = request.environ
    if not environ.get("SERVER_PROTOCOL", "").startswith("HTTP/1"):
        return True
    return bool(environ.get("CONTENT_LENGTH") or environ.get("HTTP_TRANSFER_ENCODING"))


def _is_grpc(content_type: str) -> bool:
    return content_type.startswith("application/grpc") and not content_type.startswith("application/grpc-web")


class DrainLimitedInput:
    """wsgi.input, read at most `limit` bytes.

    The runtime reads the body up to RPC_MAX_REQUEST_BYTES (refusing more), and on an early
    error (401, 415, 429, ...) drains what the client still sends, so a kept-alive connection
    stays usable. Past `limit` it stops: the client is told the connection closes.
    """

    def __init__(self, stream, limit: int, step: int | None = None):
        self.stream = stream
        self.limit = self.remaining = limit
        self.step = step or limit
        self.abandoned = False
        self.malformed: ConnectError | None = None

    def read(self, size: int = -1) -> bytes:
        if self.malformed:
            return b""
        if self.remaining <= 0:
            # Past the limit: is there more? (A request without a body has nothing to ask.)
            self.abandoned = self.abandoned or (self.limit > 0 and bool(self._read(1)))
            return b""
        size = min(self.step, self.remaining if size is None or size < 0 else min(size, self.remaining))
        data = self._read(size)
        self.remaining -= len(data)
        return data

    def _read(self, size: int) -> bytes:
        try:
            return self.stream.read(size)
        except Exception:  # the server's own classes (gunicorn: InvalidChunkSize, NoMoreData, ...)
            # Bad framing (chunk sizes) or a body cut short: the client's error, never a 500, and
            # the connection cannot carry another request. The server's text is not echoed.
            self.abandoned = True
            self.malformed = ConnectError(
                Code.INVALID_ARGUMENT, "request body: malformed HTTP framing (chunk sizes or length)"
            )
            raise self.malformed from None
