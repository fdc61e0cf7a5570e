"""What every server-streaming handler's loop needs between two looks at the database.

    stream = Stream(ctx)
    while True:
        ticket = waker.ticket(key) if waker else 0
        ... look (short autocommit queries), yield what changed, stream.sent() ...
        if stream.over():
            return                      # a clean end: the client resumes
        if stream.keepalive_due():
            yield <a bookmark>; stream.sent()
        stream.idle(waker, key, ticket)  # no connection held while it waits

- `over()`: STREAM_MAX_SECONDS (or the client's deadline, if sooner) have passed.
- `keepalive_due()`: nothing was sent for STREAM_BOOKMARK_SECONDS. A quiet stream still
  writes now and then, so that a client gone away is noticed (the write fails and the server
  closes the generator) and proxies do not time the stream out.
- `idle()`: gives the database connection back, sleeps until a NOTIFY (or, without one, for
  STREAM_POLL_SECONDS), and every STREAM_AUTH_RECHECK_SECONDS checks the caller's credential
  and permission again (interceptors.Authorize), so a revoked key ends the stream.
"""

from __future__ import annotations

import time

from connectrpc.request import RequestContext
from django.conf import settings
from django.db import connection

from . import context


class Stream:
    def __init__(self, ctx: RequestContext):
        now = time.monotonic()
        self._call = context.call_of(ctx)
        self._ends = now + settings.STREAM_MAX_SECONDS
        # The runtime's own count of the client's timeout: the body of a stream runs after the
        # middleware that set faults.arrival.current_deadline has returned.
        remaining_ms = ctx.timeout_ms
        if remaining_ms is not None:
            self._ends = min(self._ends, now + remaining_ms / 1000)
        self._quiet_since = now
        self._next_recheck = now + settings.STREAM_AUTH_RECHECK_SECONDS

    def sent(self) -> None:
        self._quiet_since = time.monotonic()

    def over(self) -> bool:
        return time.monotonic() >= self._ends

    def keepalive_due(self) -> bool:
        return time.monotonic() - self._quiet_since >= settings.STREAM_BOOKMARK_SECONDS

    def idle(self, waker, key: str, ticket: int) -> None:
        """Waits for `key`'s next notification (after `ticket`), holding no database connection."""
        if not connection.in_atomic_block:
            connection.close()  # back to the pool (or closed)
        now = time.monotonic()
        timeout = min(self._ends, self._next_recheck, self._quiet_since + settings.STREAM_BOOKMARK_SECONDS) - now
        if waker is None or not waker.listening:
            timeout = min(timeout, settings.STREAM_POLL_SECONDS)
        if timeout > 0:
            if waker is None:
                time.sleep(timeout)
            else:
                waker.wait(ticket, timeout, key)
        if time.monotonic() >= self._next_recheck and self._call.recheck is not None:
            self._call.recheck()
            self._next_recheck = time.monotonic() + settings.STREAM_AUTH_RECHECK_SECONDS
