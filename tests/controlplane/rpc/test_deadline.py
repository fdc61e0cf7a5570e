"""controlplane.rpc.deadline.Watchdog: cancels a statement still running at its deadline, and
nothing else. (tests/controlplane/rpc/test_protocol.py runs it against PostgreSQL through a real slow read.)"""

import threading
import time

from controlplane.rpc.deadline import Watchdog


class Statement:
    """What the watchdog calls on a psycopg connection: cancel_safe, here ending the 'statement'."""

    def __init__(self):
        self.cancels = 0
        self.done = threading.Event()

    def cancel_safe(self, *, timeout):
        self.cancels += 1
        self.done.set()


def test_a_statement_past_its_deadline_is_cancelled_once():
    watchdog, statement = Watchdog(), Statement()
    started = time.monotonic()
    with watchdog.watching(statement, started + 0.05):
        assert statement.done.wait(5)
    assert statement.cancels == 1
    assert 0.04 <= time.monotonic() - started < 2


def test_a_statement_done_in_time_is_never_cancelled():
    watchdog, early, late = Watchdog(), Statement(), Statement()
    with watchdog.watching(early, time.monotonic() + 0.05):
        pass  # finished well before its deadline
    with watchdog.watching(late, time.monotonic() + 0.1):
        assert late.done.wait(5)  # the watchdog ran past the first deadline
    assert (early.cancels, late.cancels) == (0, 1)


def test_the_earliest_deadline_wins_whatever_the_order_of_arrival():
    watchdog, slow, fast = Watchdog(), Statement(), Statement()
    with watchdog.watching(slow, time.monotonic() + 30), watchdog.watching(fast, time.monotonic() + 0.05):
        assert fast.done.wait(5)
    assert (slow.cancels, fast.cancels) == (0, 1)


def test_finished_statements_do_not_pile_up_behind_far_deadlines():
    watchdog, statement = Watchdog(), Statement()
    far = time.monotonic() + 3600
    with watchdog.watching(statement, far):
        for _ in range(1000):
            with watchdog.watching(Statement(), far):
                pass
        assert len(watchdog._deadlines) <= 2 * 1 + 64 + 1
    assert statement.cancels == 0
