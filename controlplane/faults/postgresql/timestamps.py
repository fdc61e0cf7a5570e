"""timestamptz columns read by psycopg's C loader, where Django reads them in Python.

Django registers a loader of its own for timestamptz (psycopg_any.register_tzloader): psycopg's
pure-Python loader, then `replace(tzinfo=...)` with the connection's time zone. It is the only
Python loader on the path of every read, ~6 µs a value: a sixth of ListJobs' CPU for a page of
20 jobs. With USE_TZ and UTC (our settings), Django sets every session's TimeZone to UTC, and
psycopg's C loader then gives exactly what Django's gives: aware datetimes in
datetime.timezone.utc. So for UTC this loader hands the rows to the C one; for any other time
zone, or without psycopg's C module, Django's stays.
"""

from __future__ import annotations

import datetime
from functools import lru_cache

from django.db.backends.postgresql.psycopg_any import get_adapters_template
from psycopg import adapt

try:
    from psycopg._cmodule import _psycopg
except ImportError:  # pragma: no cover - psycopg without its binary package
    _psycopg = None

_C_LOADER = getattr(_psycopg, "TimestamptzLoader", None)


class UtcTimestamptzLoader(adapt.Loader):
    # Django's create_cursor compares this with its connection's time zone before it would
    # register its own loader again.
    timezone = datetime.UTC

    def __init__(self, oid: int, context: adapt.AdaptContext | None = None):
        super().__init__(oid, context)
        # The C loader's bound method, as an instance attribute: psycopg's row loader calls it
        # directly (the C classes cannot be subclassed).
        self.load = _C_LOADER(oid, context).load

    def load(self, data):  # replaced per instance in __init__
        raise NotImplementedError


@lru_cache
def adapters_template(use_tz: bool, timezone):
    """Django's adapters template (get_adapters_template), with this loader where it is exact."""
    template = get_adapters_template(use_tz, timezone)
    if not use_tz or timezone is not datetime.UTC or _C_LOADER is None:
        return template
    ours = adapt.AdaptersMap(template)
    ours.register_loader("timestamptz", UtcTimestamptzLoader)
    return ours
