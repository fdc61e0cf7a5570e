"""Rows looked up once per call, shared by the code that serves it.

An authorizer looks up the resource a request names (to learn its namespace); the handler then
reads the same row. The RPC runtime opens one memo per call (`per_call`); selectors read through
`looked_up` without knowing which runtime, if any, serves them.
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar

_memo: ContextVar[dict | None] = ContextVar("controlplane_lookups", default=None)


@contextlib.contextmanager
def per_call():
    """Lookups inside the block share their rows; the memo ends with the block."""
    token = _memo.set({})
    try:
        yield
    finally:
        _memo.reset(token)


def looked_up(key, load, *, reload: bool = False):
    """`load()` once per call: an authorizer's lookup of a resource and the handler's share the row.

    reload: load anyway and remember this row instead, e.g. one read with a lock, which an
    earlier unlocked copy must not stand in for (and which later plain lookups then share).
    Outside a call (commands, the console) it simply loads. A failed load is not remembered.
    """
    memo = _memo.get()
    if memo is None:
        return load()
    if reload or key not in memo:
        memo[key] = load()
    return memo[key]
