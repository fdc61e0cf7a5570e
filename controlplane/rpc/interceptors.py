"""The interceptors every RPC runs through, in the order settings.RPC_INTERCEPTORS declares
(`chain`), after Django's MIDDLEWARE (`request_path` lists both):

Before the body is read (connectrpc runs these metadata interceptors first):
  1. Authenticate   the principal the middleware resolved; none → unauthenticated.
  2. SessionPolicy  cookie calls only: an allowed Origin, and JSON only.
Then, around the handler, with the decoded request:
  3. MapErrors      every exception → one Connect error (errors.to_connect_error).
  4. Validate       validation.validate_request on the decoded message, for every protocol.
  5. Transaction    writes: one database transaction; read-only methods: none. The call's
                    deadline bounds the database work of both (deadline.py).
  6. Authorize      the method's declared permission, before the handler (inside a write's
                    transaction, so lookups it makes see the same snapshot).

Server streams (NO_SIDE_EFFECTS only) pass 1-4 and 6 alike, with two differences: they run
in autocommit with no transaction at all (Transaction has no stream form: a stream's loop
gives its connection back while it waits, rpc/streams.py), and Authorize leaves them a way to
check the caller again (`Call.recheck`), which their loops call every few seconds.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping

from connectrpc.method import IdempotencyLevel
from connectrpc.request import RequestContext
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError, connection, transaction
from django.utils.module_loading import import_string
from google.protobuf.message import Message

from controlplane.auth import Kind
from controlplane.auth.authenticators import authenticate
from controlplane.auth.origin import is_same_origin_request
from controlplane.errors import Error
from controlplane.faults.arrival import current_deadline

from . import context
from .deadline import database_deadline, is_cancellation
from .errors import to_connect_error
from .permissions import Permission
from .validation import validate_request


def procedure(ctx: RequestContext) -> str:
    return f"{ctx.method.service_name}/{ctx.method.name}"


class Authenticate:
    def on_start_sync(self, ctx: RequestContext) -> None:
        call = context.bind(ctx)
        try:
            principal = call.http_request.principal
            if not principal.is_authenticated:
                raise Error.unauthenticated(principal.failure or "a credential is required")
        except Exception as exc:
            raise to_connect_error(exc, ctx) from None
        # The principal itself, not the middleware's lazy proxy of it: every later check reads it.
        call.principal = getattr(principal, "_wrapped", principal)

    def on_end_sync(self, token, ctx, error) -> None:
        return


class SessionPolicy:
    """Browsers may attach the cp_session cookie to cross-site requests, never a bearer token.

    So cookie calls must come from an allowed origin, and be Connect JSON: a page on another
    site cannot send application/json (nor a gRPC-Web or binary body) without a CORS preflight,
    which this service never grants.
    """

    def on_start_sync(self, ctx: RequestContext) -> None:
        call = context.call_of(ctx)
        if call.principal.via != "session":
            return
        if not is_same_origin_request(call.http_request):
            raise to_connect_error(
                Error.permission_denied("cross-site request refused: Origin is not an allowed origin"), ctx
            )
        if not _is_connect_json(call.http_request):
            refused = Error.invalid_argument("Content-Type", "cookie-authenticated calls accept only application/json")
            raise to_connect_error(refused, ctx)

    def on_end_sync(self, token, ctx, error) -> None:
        return


def _is_connect_json(http_request) -> bool:
    if http_request.method == "GET":
        return http_request.GET.get("encoding") == "json"
    # Or Connect's streaming JSON (server streams): a cross-site page cannot send it without a
    # preflight either.
    return http_request.content_type in ("application/json", "application/connect+json")


Next = Callable[[Message, RequestContext], Message]


class MapErrors:
    """Also notes the decoded request on the call, as the first interceptor to see it: the
    outermost ones (metadata interceptors) run before the body is read."""

    def intercept_unary_sync(self, call_next: Next, request: Message, ctx: RequestContext) -> Message:
        context.call_of(ctx).request = request
        try:
            return call_next(request, ctx)
        except Exception as exc:
            raise to_connect_error(exc, ctx) from None

    def intercept_server_stream_sync(self, call_next, request: Message, ctx: RequestContext) -> Iterator[Message]:
        # A generator: errors raised while the stream runs, not only before it starts, are mapped.
        context.call_of(ctx).request = request
        try:
            yield from call_next(request, ctx)
        except Exception as exc:
            raise to_connect_error(exc, ctx) from None


class Validate:
    def intercept_unary_sync(self, call_next: Next, request: Message, ctx: RequestContext) -> Message:
        validate_request(request)
        return call_next(request, ctx)

    intercept_server_stream_sync = intercept_unary_sync


class Transaction:
    """Write methods run in one transaction: all of their changes or none.

    Read-only methods (proto idempotency_level NO_SIDE_EFFECTS) run in autocommit: a
    BEGIN/COMMIT pair would be two of a cheap read's four round trips, and buys nothing
    under READ COMMITTED, where each statement takes its own snapshot anyway. Called inside
    a transaction that is already open (a test's), a read still takes a savepoint, so that a
    statement cancelled at its deadline cannot abort the enclosing transaction.

    Methods declared @rpc(own_transactions=True) open their own, short transactions (a long
    poll must not hold one, nor a connection, while it waits): they run in autocommit too.
    """

    def __init__(self, own_transactions: frozenset[str] = frozenset()):
        self.own_transactions = own_transactions

    def intercept_unary_sync(self, call_next: Next, request: Message, ctx: RequestContext) -> Message:
        deadline = current_deadline.get()  # computed where the request entered
        autocommit = (
            ctx.method.idempotency_level is IdempotencyLevel.NO_SIDE_EFFECTS or procedure(ctx) in self.own_transactions
        ) and not connection.in_atomic_block
        if autocommit and deadline is None:
            return call_next(request, ctx)  # nothing to open, nothing to bound
        try:
            with (
                contextlib.nullcontext() if autocommit else transaction.atomic(),
                database_deadline(deadline, in_transaction=not autocommit),
            ):
                reply = call_next(request, ctx)
                if deadline is not None and time.monotonic() > deadline:
                    # Checked before the commit: a call answered deadline_exceeded changed nothing.
                    raise Error.deadline_exceeded()
                return reply
        except DatabaseError as exc:
            if deadline is not None and (is_cancellation(exc) or time.monotonic() > deadline):
                raise Error.deadline_exceeded() from None
            raise


class Authorize:
    def __init__(self, permissions: Mapping[str, Permission]):
        self.permissions = permissions

    def intercept_unary_sync(self, call_next: Next, request: Message, ctx: RequestContext) -> Message:
        self._check(self.permissions[procedure(ctx)], context.principal_of(ctx), request)
        return call_next(request, ctx)

    def intercept_server_stream_sync(self, call_next, request: Message, ctx: RequestContext) -> Iterator[Message]:
        permission, call = self.permissions[procedure(ctx)], context.call_of(ctx)
        self._check(permission, call.principal, request)

        def recheck() -> None:
            # The credential as the middleware would see it now (a revoked key's cache entry is
            # gone by NOTIFY), and the method's permission for it.
            principal = authenticate(call.http_request)
            if not principal.is_authenticated:
                raise Error.unauthenticated(principal.failure or "the credential is no longer valid")
            self._check(permission, principal, request)
            call.principal = principal

        call.recheck = recheck
        return call_next(request, ctx)

    @staticmethod
    def _check(permission: Permission, principal, request: Message) -> None:
        if principal.kind is Kind.RUNNER and not permission.admits_runners:
            raise Error.permission_denied("runner keys may call only containers.runtime.v1.RunnerService")
        permission.check(principal, request)


def chain(permissions: Mapping[str, Permission], own_transactions: frozenset[str] = frozenset()) -> tuple:
    """settings.RPC_INTERCEPTORS, built in the declared order, which is the order they run:
    metadata interceptors (on_start_sync) must all come before those around the handler.

    An entry is a class, instantiated once, or a function returning zero or more interceptors
    (tracing's, present only when tracing is on)."""
    built, paths = [], []
    for path in settings.RPC_INTERCEPTORS:
        factory = import_string(path)
        if not isinstance(factory, type):
            made = tuple(factory())
        elif issubclass(factory, Authorize):
            made = (factory(permissions),)
        elif issubclass(factory, Transaction):
            made = (factory(own_transactions),)
        else:
            made = (factory(),)
        built.extend(made)
        paths.extend([path] * len(made))
    around = [i for i, interceptor in enumerate(built) if not hasattr(interceptor, "on_start_sync")]
    for index, interceptor in enumerate(built):
        if hasattr(interceptor, "on_start_sync") and around and index > around[0]:
            raise ImproperlyConfigured(
                f"RPC_INTERCEPTORS: {paths[index]} runs before the body is read, so it "
                f"must be listed before {paths[around[0]]}, which runs around the handler"
            )
    return tuple(built)


def request_path() -> list[str]:
    """What an RPC passes through, in order: Django's middleware, the interceptors, the handler."""
    return [*settings.MIDDLEWARE, *settings.RPC_INTERCEPTORS, "the method's @rpc handler"]
