"""A per-process cache of resolved API keys, kept correct by PostgreSQL NOTIFY.

Authentication runs on every call and its key lookup is a whole database round trip, so
resolved keys (digest → KeyRecord, never the plaintext) are kept in memory. A revoked key
must be refused at once in every worker process, so a TTL alone would not do:

- triggers on the key table (migrations 0005, 0007) send the row's digest on CHANNEL after
  every DELETE and every UPDATE that changes more than last_used_at, whatever wrote it
  (services, console, raw SQL, a namespace's cascade), and FLUSH after a TRUNCATE;
- each process's NOTIFY listener (controlplane.notify: one thread and connection, started on
  first use, i.e. after gunicorn's fork) delivers them here; the cache evicts what it is told;
- fail closed: the cache answers only while that connection is listening; when it drops,
  the cache is flushed and bypassed until the listener is back (reconnecting with backoff);
- a call also bypasses the cache while the listener's socket holds unread notifications
  or the listener is applying them, so a revocation that PostgreSQL has already sent is
  never outrun by a hit;
- an entry read from the database is stored only if no invalidation happened since the
  read began (the generation), so a row read just before a revocation is not cached after
  the revocation's eviction;
- NOTIFY is asynchronous, so a revocation waits for every listener (await_everywhere): it
  sends a barrier on CHANNEL after its commit, and each listener, which reads notifications
  in commit order, confirms the barrier on ACK_CHANNEL once it has applied what came before.

Unknown keys are never cached (no filling the cache with guesses; a key issued a moment
ago works at once), nor revoked ones. Entries live at most API_KEY_CACHE_SECONDS (a safety
net; 0 disables the cache) and at most API_KEY_CACHE_SIZE are kept (least recently used
go first). SQLite has no NOTIFY, so there is no cache there.
"""

from __future__ import annotations

import logging
import os
import secrets
import select
import threading
import time
from collections import OrderedDict

import psycopg
from django.conf import settings
from django.db import connections

from controlplane import notify
from controlplane.observability import metrics

logger = logging.getLogger(__name__)

CHANNEL = "apikeys_changed"
FLUSH = "*"  # a TRUNCATE's payload; never a digest (hex)
BARRIER = "barrier:"  # + a token: "confirm on ACK_CHANNEL that all before this is applied"
ACK_CHANNEL = "apikeys_applied"
APPLICATION_NAME = notify.APPLICATION_NAME
listener_name = notify.listener_name
own_connection_params = notify.connection_params


class KeyCache:
    """digest → (stored at, KeyRecord), for one database alias; a notify.Subscriber."""

    channel = CHANNEL

    def __init__(self, alias: str):
        self.alias = alias
        self._entries: OrderedDict[str, tuple[float, object]] = OrderedDict()
        self._lock = threading.Lock()
        self._generation = 0  # bumped by every invalidation and by the listener going up or down
        self._listening = False
        self._applying = False
        self._socket: int | None = None  # the listener connection's file descriptor
        self._subscribed = False
        self._barriers: list[str] = []  # tokens delivered in the current batch (listener thread only)
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

    def _ensure_listener(self) -> None:
        if not self._subscribed:
            with self._lock:
                if self._subscribed:
                    return
                self._subscribed = True
            notify.subscribe(self.alias, self)

    # --- notify.Subscriber: called by the listener thread -------------------------------

    def up(self, fileno: int) -> None:
        with self._lock:
            self._entries.clear()
            self._generation += 1
            self._socket = fileno
            self._listening = True
            self.connects += 1

    def down(self) -> None:
        with self._lock:
            self._listening = False
            self._socket = None
            self._entries.clear()
            self._generation += 1

    def begin(self) -> None:
        with self._lock:
            self._applying = True  # from now until evicted, calls bypass the cache

    def deliver(self, payload: str) -> None:
        if payload.startswith(BARRIER):
            self._barriers.append(payload.removeprefix(BARRIER))
        else:
            self.evict(payload)

    def end(self) -> list[tuple[str, str]]:
        with self._lock:
            self._applying = False
        # Everything delivered before each barrier is applied now: confirm them.
        barriers, self._barriers = self._barriers, []
        return [(ACK_CHANNEL, token) for token in barriers]


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


def forget(digest: str, alias: str = "default") -> None:
    """Evicts a key from every process's cache: this one now; the others, told by the trigger,
    before this returns (await_everywhere). Call it after the change has committed."""
    for cache in list(_caches.values()):
        cache.evict(digest)
    if settings.API_KEY_CACHE_SECONDS > 0 and connections[alias].vendor == "postgresql":
        await_everywhere(alias)


def await_everywhere(alias: str) -> bool:
    """After a committed change to keys: returns once every process's listener has applied it.

    True when all confirmed; False (logged) after API_KEY_REVOCATION_WAIT_SECONDS. Listeners that
    start listening after the barrier need not confirm: they start with an empty cache. A
    listener that did not confirm in time is named in the log.
    """
    params = own_connection_params(alias, application_name=f"{APPLICATION_NAME}-barrier")
    token = secrets.token_hex(8)
    timeout = settings.API_KEY_REVOCATION_WAIT_SECONDS
    deadline = time.monotonic() + timeout
    try:
        waiting = _barrier(params, token, deadline)
    except psycopg.Error as exc:  # the change is committed: say so, and that it was not confirmed
        logger.warning("API key change not confirmed by the key cache listeners: %s", type(exc).__name__)
        return False
    if waiting:
        logger.warning(
            "API key change not confirmed in %.1f s by the key cache listeners with backend pids %s",
            timeout,
            sorted(waiting),
        )
    return not waiting


def _barrier(params: dict, token: str, deadline: float) -> set[int]:
    """Sends the barrier and collects confirmations: the backend pids that did not confirm."""
    with psycopg.connect(**params) as conn:
        conn.execute(f"LISTEN {ACK_CHANNEL}")
        conn.execute("SELECT pg_notify(%s, %s)", [CHANNEL, BARRIER + token])
        # After the barrier: every listener that could have missed it has gone (its cache with it).
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE %s",
            [APPLICATION_NAME + " %"],
        )
        waiting = {pid for (pid,) in rows}
        while waiting and (left := deadline - time.monotonic()) > 0:
            for notification in conn.notifies(timeout=left, stop_after=1):
                if notification.payload == token:
                    waiting.discard(notification.pid)
            if waiting:  # gone since: a listener whose connection dropped has emptied its cache
                rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE pid = ANY(%s)", [list(waiting)])
                waiting &= {pid for (pid,) in rows}
    return waiting


def reset() -> None:
    """Stops every listener and drops every cache of this process."""
    with _caches_lock:
        _caches.clear()
    notify.reset()


def _after_fork_in_child() -> None:
    # The listener does not survive a fork (controlplane.notify): start from nothing.
    global _caches_lock
    _caches.clear()
    _caches_lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)
