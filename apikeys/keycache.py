"""A per-process cache of resolved API keys, kept correct by PostgreSQL NOTIFY.

Authentication runs on every call and its key lookup is a whole database round trip, so
resolved keys (digest → KeyRecord, never the plaintext) are kept in memory. A revoked key
must be refused at once in every worker process, so a TTL alone would not do:

- a trigger on the key table (migration 0005) sends the row's digest on CHANNEL after every
  UPDATE or DELETE, whatever wrote it (services, console, raw SQL, a namespace's cascade),
  and FLUSH after a TRUNCATE;
- each process runs one listener thread with its own connection (LISTEN), started on first
  use, i.e. after gunicorn's fork; it evicts what it is told;
- fail closed: the cache answers only while that connection is listening; when it drops,
  the cache is flushed and bypassed until the listener is back (reconnecting with backoff);
- a call also bypasses the cache while the listener's socket holds unread notifications
  or the listener is applying them, so a revocation that PostgreSQL has already sent is
  never outrun by a hit;
- an entry read from the database is stored only if no invalidation happened since the
  read began (the generation), so a row read just before a revocation is not cached after
  the revocation's eviction.

Unknown keys are never cached (no filling the cache with guesses; a key issued a moment
ago works at once), nor revoked ones. Entries live at most API_KEY_CACHE_SECONDS (a safety
net; 0 disables the cache) and at most API_KEY_CACHE_SIZE are kept (least recently used
go first). SQLite has no NOTIFY, so there is no cache there.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import threading
import time
from collections import OrderedDict

import psycopg
from django.conf import settings
from django.db import connections

from controlplane.observability import metrics

logger = logging.getLogger(__name__)

CHANNEL = "apikeys_changed"
FLUSH = "*"  # a TRUNCATE's payload; never a digest (hex)
APPLICATION_NAME = "controlplane-keycache"  # in pg_stat_activity, with the process id
MAX_BACKOFF_SECONDS = 5.0


class KeyCache:
    """digest → (stored at, KeyRecord), for one database alias, with its listener thread."""

    def __init__(self, alias: str):
        self.alias = alias
        self._entries: OrderedDict[str, tuple[float, object]] = OrderedDict()
        self._lock = threading.Lock()
        self._generation = 0  # bumped by every invalidation and by the listener going up or down
        self._listening = False
        self._applying = False
        self._socket: int | None = None  # the listener connection's file descriptor
        self._stop = threading.Event()
        self._wake_read, self._wake_write = os.pipe()  # stop() interrupts the listener's wait
        self._thread: threading.Thread | None = None
        self.connects = 0  # times the listener has started listening (tests and logs)

    # --- the request path ------------------------------------------------------------

    def get(self, digest: str):
        """The cached record, or None: not cached, expired, or the cache cannot be trusted now."""
        self._ensure_listener()
        with self._lock:
            if not self._listening or self._applying or self._unread_notifications():
                return None
            entry = self._entries.get(digest)
            if entry is None:
                return None
            stored_at, record = entry
            if time.monotonic() - stored_at >= settings.API_KEY_CACHE_SECONDS:
                del self._entries[digest]
                return None
            self._entries.move_to_end(digest)
            return record

    def ticket(self) -> int | None:
        """Taken before reading a key from the database; None when nothing may be stored."""
        with self._lock:
            return self._generation if self._listening else None

    def put(self, digest: str, record, ticket: int | None) -> None:
        with self._lock:
            if ticket is None or not self._listening or ticket != self._generation:
                return  # an invalidation may have passed the row while it was being read
            self._entries[digest] = (time.monotonic(), record)
            self._entries.move_to_end(digest)
            while len(self._entries) > settings.API_KEY_CACHE_SIZE:
                self._entries.popitem(last=False)

    def evict(self, digest: str) -> None:
        metrics.record_key_cache_invalidation()
        with self._lock:
            self._generation += 1
            if digest == FLUSH:
                self._entries.clear()
            else:
                self._entries.pop(digest, None)

    @property
    def listening(self) -> bool:
        return self._listening

    def __len__(self) -> int:
        return len(self._entries)

    def _unread_notifications(self) -> bool:
        if self._socket is None:
            return True
        try:
            readable, _, _ = select.select([self._socket], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)

    # --- the listener thread ---------------------------------------------------------

    def _ensure_listener(self) -> None:
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._listen_forever, name=f"apikeys-keycache-{self.alias}", daemon=True
                    )
                    self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        os.write(self._wake_write, b"x")
        if self._thread is not None:
            self._thread.join(timeout)
        self.close_pipe()

    def close_pipe(self) -> None:
        for fd in (self._wake_read, self._wake_write):
            with contextlib.suppress(OSError):  # already closed
                os.close(fd)

    def _listen_forever(self) -> None:
        backoff, lost = 0.1, False
        while not self._stop.is_set():
            try:
                with psycopg.connect(**self._connection_params()) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self._up(conn)
                    if lost:
                        logger.warning("API key cache listener on %r is back; using the cache again", self.alias)
                    lost, backoff = False, 0.1
                    self._relay(conn)
            except Exception as exc:  # any failure: fail closed and retry
                if not self._stop.is_set() and not lost:  # once per outage, not at every retry
                    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    logger.warning("API key cache listener on %r lost (%s); bypassing the cache", self.alias, reason)
                    lost = True
            finally:
                self._down()
            self._stop.wait(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)

    def _connection_params(self) -> dict:
        params = connections[self.alias].get_connection_params()
        params.pop("cursor_factory", None)
        params.update(
            autocommit=True,
            application_name=listener_name(),
            # A silently dead peer is noticed by TCP, not only by the next notification.
            keepalives=1,
            keepalives_idle=10,
            keepalives_interval=5,
            keepalives_count=3,
        )
        params.setdefault("connect_timeout", 3)
        return params

    def _relay(self, conn: psycopg.Connection) -> None:
        while not self._stop.is_set():
            readable, _, _ = select.select([conn.fileno(), self._wake_read], [], [])
            if conn.fileno() not in readable:
                continue
            with self._lock:
                self._applying = True  # from now until evicted, calls bypass the cache
            try:
                for notify in conn.notifies(timeout=0):  # raises if the server went away
                    self.evict(notify.payload)
            finally:
                with self._lock:
                    self._applying = False

    def _up(self, conn: psycopg.Connection) -> None:
        with self._lock:
            self._entries.clear()
            self._generation += 1
            self._socket = conn.fileno()
            self._listening = True
            self.connects += 1

    def _down(self) -> None:
        with self._lock:
            self._listening = False
            self._socket = None
            self._entries.clear()
            self._generation += 1


def listener_name(pid: int | None = None) -> str:
    return f"{APPLICATION_NAME} {pid or os.getpid()}"


_caches: dict[str, KeyCache] = {}
_caches_lock = threading.Lock()


def cache_for(alias: str, connection=None) -> KeyCache | None:
    """This process's cache for `alias`, or None when there is none (SQLite, or the setting is 0).
    `connection`: connections[alias], when the caller holds it already (a thread-local lookup)."""
    if settings.API_KEY_CACHE_SECONDS <= 0 or (connection or connections[alias]).vendor != "postgresql":
        return None
    cache = _caches.get(alias)
    if cache is None:
        with _caches_lock:
            cache = _caches.setdefault(alias, KeyCache(alias))
    return cache


def forget(digest: str) -> None:
    """Evicts a key from this process's caches now (the trigger tells the other processes)."""
    for cache in list(_caches.values()):
        cache.evict(digest)


def reset() -> None:
    """Stops every listener and drops every cache of this process."""
    with _caches_lock:
        caches = list(_caches.values())
        _caches.clear()
    for cache in caches:
        cache.stop()


def _after_fork_in_child() -> None:
    # The listener thread does not survive a fork, and its connection belongs to the parent
    # (psycopg does not close a connection from another process): start from nothing.
    global _caches_lock
    for cache in _caches.values():
        cache.close_pipe()  # the child's copies; the parent's stay open
    _caches.clear()
    _caches_lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)
