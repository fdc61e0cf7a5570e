"""Which exceptions that are not service errors mean what: past the call's deadline, the
database unreachable (a client may retry), or a bug (internal). One rule for every runtime."""

from __future__ import annotations

import time

from controlplane.errors import Error

from .arrival import current_deadline
from .database import unavailable_error


def classify(exc: BaseException) -> Error:
    """The `Error` a caller is answered for `exc`, an exception that is not an `Error`."""
    deadline = current_deadline.get()
    if deadline is not None and time.monotonic() >= deadline:
        return Error.deadline_exceeded()
    outage = unavailable_error(exc)
    if outage is not None:
        return outage
    return Error.internal()
