"""One PostgreSQL LISTEN connection per process and database, shared by whoever needs NOTIFY.

The API key cache (apikeys.keycache) and the runners' long poll (workloads.services.signal)
both learn of changes from NOTIFY; one listener thread per process serves them all, so a
gunicorn worker holds one extra connection whatever listens.

- The thread starts on the first `subscribe` (so after gunicorn's fork) and LISTENs on each
  subscriber's channel; a subscriber added later is listened for without a reconnect.
- Subscribers are told when the connection is up (`up(fileno)`, the socket they may poll
  for unread notifications) and down (`down()`): while down, nothing can be trusted to be
  announced, and each subscriber decides what that means (the key cache fails closed).
- A batch of notifications is wrapped in `begin()` / `end()`, each payload delivered with
  `deliver(payload)`. `end()` may return notifications to send once the batch is applied
  (channel, payload): the key cache confirms revocation barriers so.
- It reconnects with backoff (at most MAX_BACKOFF_SECONDS); a fork starts from nothing.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import threading
from collections.abc import Iterable
from typing import Protocol

import psycopg
from django.db import connections

logger = logging.getLogger(__name__)

APPLICATION_NAME = "controlplane-listener"  # in pg_stat_activity, with the process id
MAX_BACKOFF_SECONDS = 5.0


class Subscriber(Protocol):
    channel: str

    def up(self, fileno: int) -> None: ...
    def down(self) -> None: ...
    def begin(self) -> None: ...
    def deliver(self, payload: str) -> None: ...
    def end(self) -> Iterable[tuple[str, str]] | None: ...


class Listener:
    """The listener thread of one database alias, with its subscribers."""

    def __init__(self, alias: str):
        self.alias = alias
        self._lock = threading.Lock()
        self._subscribers: list[Subscriber] = []
        self._pending: list[Subscriber] = []  # subscribed, not yet listened for
        self._stop = threading.Event()
        self._wake_read, self._wake_write = os.pipe()  # subscribe() and stop() interrupt the wait
        self._thread: threading.Thread | None = None

    def subscribe(self, subscriber: Subscriber) -> None:
        with self._lock:
            self._pending.append(subscriber)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._listen_forever, name=f"controlplane-listener-{self.alias}", daemon=True
                )
                self._thread.start()
        self._wake()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake()
        if self._thread is not None:
            self._thread.join(timeout)
        self.close_pipe()

    def close_pipe(self) -> None:
        for fd in (self._wake_read, self._wake_write):
            with contextlib.suppress(OSError):  # already closed
                os.close(fd)

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # stopped: nothing to wake
            os.write(self._wake_write, b"x")

    def _listen_forever(self) -> None:
        backoff, lost = 0.1, False
        while not self._stop.is_set():
            try:
                with psycopg.connect(**self._connection_params()) as conn:
                    with self._lock:
                        self._pending = self._subscribers + self._pending
                        self._subscribers = []
                    self._listen_pending(conn)
                    if lost:
                        logger.warning("NOTIFY listener on %r is back", self.alias)
                    lost, backoff = False, 0.1
                    self._relay(conn)
            except Exception as exc:  # any failure: subscribers are told, and it retries
                if not self._stop.is_set() and not lost:  # once per outage, not at every retry
                    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    logger.warning("NOTIFY listener on %r lost (%s)", self.alias, reason)
                    lost = True
            finally:
                for subscriber in self._all():
                    subscriber.down()
            self._stop.wait(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)

    def _all(self) -> list[Subscriber]:
        with self._lock:
            return self._subscribers + self._pending

    def _listen_pending(self, conn: psycopg.Connection) -> None:
        with self._lock:
            pending, self._pending = self._pending, []
        for subscriber in pending:
            conn.execute(f"LISTEN {subscriber.channel}")
            subscriber.up(conn.fileno())
            with self._lock:
                self._subscribers.append(subscriber)

    def _connection_params(self) -> dict:
        return connection_params(
            self.alias,
            application_name=listener_name(),
            # A silently dead peer is noticed by TCP, not only by the next notification.
            keepalives=1,
            keepalives_idle=10,
            keepalives_interval=5,
            keepalives_count=3,
        )

    def _relay(self, conn: psycopg.Connection) -> None:
        while not self._stop.is_set():
            readable, _, _ = select.select([conn.fileno(), self._wake_read], [], [])
            if self._wake_read in readable:
                os.read(self._wake_read, 512)
                self._listen_pending(conn)
            if conn.fileno() not in readable:
                continue
            subscribers = self._all()
            for subscriber in subscribers:
                subscriber.begin()
            replies = []
            try:
                for notify in conn.notifies(timeout=0):  # raises if the server went away
                    for subscriber in subscribers:
                        if subscriber.channel == notify.channel:
                            subscriber.deliver(notify.payload)
            finally:
                for subscriber in subscribers:
                    replies.extend(subscriber.end() or ())
            for channel, payload in replies:
                conn.execute("SELECT pg_notify(%s, %s)", [channel, payload])


def connection_params(alias: str, **options) -> dict:
    """A psycopg connection of its own (autocommit, outside Django's pool) to `alias`'s database."""
    params = connections[alias].get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("pool", None)
    params.update(autocommit=True, **options)
    params.setdefault("connect_timeout", 3)
    return params


def listener_name(pid: int | None = None) -> str:
    return f"{APPLICATION_NAME} {pid or os.getpid()}"


_listeners: dict[str, Listener] = {}
_listeners_lock = threading.Lock()


def subscribe(alias: str, subscriber: Subscriber) -> None:
    """Delivers `subscriber.channel`'s notifications on database `alias` (PostgreSQL only)."""
    with _listeners_lock:
        listener = _listeners.get(alias)
        if listener is None:
            listener = _listeners[alias] = Listener(alias)
    listener.subscribe(subscriber)


_on_reset: list = []


def on_reset(callback) -> None:
    """Calls `callback()` after `reset()`, for holders of subscribers to drop them."""
    _on_reset.append(callback)


def reset() -> None:
    """Stops every listener of this process."""
    with _listeners_lock:
        listeners = list(_listeners.values())
        _listeners.clear()
    for listener in listeners:
        listener.stop()
    for callback in _on_reset:
        callback()


def _after_fork_in_child() -> None:
    # The thread does not survive a fork, and its connection belongs to the parent (psycopg
    # does not close a connection from another process): start from nothing.
    global _listeners_lock
    for listener in _listeners.values():
        listener.close_pipe()  # the child's copies; the parent's stay open
    _listeners.clear()
    _listeners_lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)
