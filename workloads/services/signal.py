"""Waking runners' long polls (AcquireWork) when work is queued: PostgreSQL NOTIFY on
CHANNEL, received by this process's listener (controlplane.notify) and turned into a
condition the waiting calls sleep on. No database connection is held while waiting.

SQLite has no NOTIFY: `work_signal()` is None there, and AcquireWork answers at once.
"""

from __future__ import annotations

import os
import threading

from django.db import connection

from controlplane import notify

CHANNEL = "work_queued"


class WorkSignal:
    """A generation counter bumped by every notification and by the listener going up or down."""

    channel = CHANNEL

    def __init__(self):
        self._condition = threading.Condition()
        self._generation = 0
        self._listening = False

    @property
    def listening(self) -> bool:
        return self._listening

    def ticket(self) -> int:
        """Taken before looking for work: a notification after it ends the next wait."""
        with self._condition:
            return self._generation

    def wait(self, ticket: int, timeout: float) -> None:
        with self._condition:
            self._condition.wait_for(lambda: self._generation != ticket, timeout)

    def wait_listening(self, timeout: float) -> bool:
        with self._condition:
            return self._condition.wait_for(lambda: self._listening, timeout)

    def _bump(self, listening: bool) -> None:
        with self._condition:
            self._listening = listening
            self._generation += 1
            self._condition.notify_all()

    # notify.Subscriber
    def up(self, fileno: int) -> None:
        self._bump(True)

    def down(self) -> None:
        self._bump(False)

    def begin(self) -> None:
        return

    def deliver(self, payload: str) -> None:
        self._bump(True)

    def end(self) -> None:
        return


_signal: WorkSignal | None = None
_lock = threading.Lock()


def work_signal() -> WorkSignal | None:
    """This process's signal, listening (PostgreSQL), or None (no NOTIFY)."""
    global _signal
    if connection.vendor != "postgresql":
        return None
    if _signal is None:
        with _lock:
            if _signal is None:
                signal = WorkSignal()
                notify.subscribe(connection.alias, signal)
                signal.wait_listening(2.0)
                _signal = signal
    return _signal


def announce() -> None:
    """Wakes waiting runners once the current transaction commits (NOTIFY is transactional)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"NOTIFY {CHANNEL}")


def _forget() -> None:
    global _signal, _lock
    _signal = None
    _lock = threading.Lock()


notify.on_reset(_forget)  # its listener is gone: the next call subscribes again
os.register_at_fork(after_in_child=_forget)
