"""Waking waiting calls when something changes: PostgreSQL NOTIFY, received by this process's
one listener (controlplane.notify) and turned into conditions the waiting calls sleep on. No
database connection is held while waiting.

Two channels:
- WORK (`work_queued`, no payload): runners' long polls (AcquireWork) wake when work is queued;
- JOBS (`job_changed`, payload "ns:<namespace pk>" or "job:<job pk>"): WatchJobs and
  FollowJobLogs wake when a job of their namespace, or their job's output, changed.

SQLite has no NOTIFY: `signal_for()` is None there, and callers poll (or answer at once).
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from dataclasses import dataclass, field

from django.db import connection

from controlplane import notify

WORK = "work_queued"
JOBS = "job_changed"
CHANNEL = WORK  # the runners' channel, by its old name
_PAYLOAD = re.compile(r"(?:[a-z]+:[0-9]+)?")


@dataclass
class _Key:
    condition: threading.Condition
    generation: int = 0
    holders: int = 0


@dataclass
class Signal:
    """One generation counter per payload someone waits for, bumped by that payload's
    notifications, and every counter by the listener going up or down (a notification may
    have been missed: waiters look again)."""

    channel: str
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _keys: dict[str, _Key] = field(default_factory=dict)
    _listening: bool = False

    def __post_init__(self):
        self._listening_changed = threading.Condition(self._lock)
        self._keys[""] = _Key(threading.Condition(self._lock), holders=1)  # payload-less NOTIFY: always held

    @property
    def listening(self) -> bool:
        return self._listening

    @contextlib.contextmanager
    def interest(self, key: str):
        """Counts notifications of `key` while the block runs (a stream's whole life)."""
        with self._lock:
            entry = self._keys.get(key)
            if entry is None:
                entry = self._keys[key] = _Key(threading.Condition(self._lock))
            entry.holders += 1
        try:
            yield
        finally:
            with self._lock:
                entry.holders -= 1
                if not entry.holders:
                    del self._keys[key]

    def ticket(self, key: str = "") -> int:
        """Taken before looking: a notification of `key` after it ends the next wait."""
        with self._lock:
            return self._keys[key].generation

    def wait(self, ticket: int, timeout: float, key: str = "") -> None:
        with self._lock:
            entry = self._keys[key]
            entry.condition.wait_for(lambda: entry.generation != ticket, timeout)

    def wait_listening(self, timeout: float) -> bool:
        with self._lock:
            return self._listening_changed.wait_for(lambda: self._listening, timeout)

    def _bump(self, keys) -> None:
        for entry in keys:
            entry.generation += 1
            entry.condition.notify_all()

    # notify.Subscriber
    def up(self, fileno: int) -> None:
        with self._lock:
            self._listening = True
            self._listening_changed.notify_all()
            self._bump(self._keys.values())

    def down(self) -> None:
        with self._lock:
            self._listening = False
            self._bump(self._keys.values())

    def begin(self) -> None:
        return

    def deliver(self, payload: str) -> None:
        with self._lock:
            entry = self._keys.get(payload)
            if entry is not None:
                self._bump([entry])

    def end(self) -> None:
        return


_signals: dict[str, Signal] = {}
_lock = threading.Lock()


def signal_for(channel: str) -> Signal | None:
    """This process's signal of `channel`, listening (PostgreSQL), or None (no NOTIFY)."""
    if connection.vendor != "postgresql":
        return None
    signal = _signals.get(channel)
    if signal is None:
        with _lock:
            signal = _signals.get(channel)
            if signal is None:
                signal = Signal(channel)
                notify.subscribe(connection.alias, signal)
                signal.wait_listening(2.0)
                _signals[channel] = signal
    return signal


def work_signal() -> Signal | None:
    return signal_for(WORK)


def announce(channel: str = WORK, payload: str = "") -> None:
    """Wakes the waiters of `channel` (and `payload`) once the current transaction commits
    (NOTIFY is transactional; the same notification twice in one transaction is sent once)."""
    if connection.vendor == "postgresql":
        # NOTIFY takes no parameters; channels are this module's names and payloads ours
        # ("ns:12", "job:34"), checked to need no quoting.
        if channel not in (WORK, JOBS) or not _PAYLOAD.fullmatch(payload):
            raise ValueError(f"not a notification of ours: {channel!r} {payload!r}")
        with connection.cursor() as cursor:
            cursor.execute(f"NOTIFY {channel}, '{payload}'" if payload else f"NOTIFY {channel}")


def _forget() -> None:
    global _lock
    _signals.clear()
    _lock = threading.Lock()


notify.on_reset(_forget)  # its listener is gone: the next call subscribes again
os.register_at_fork(after_in_child=_forget)
