"""Logging filters: each event once, at the level it deserves."""

import logging


class NotImplementedIsAWarning(logging.Filter):
    """django.request logs every 5xx as ERROR. A 501 (`unimplemented`, e.g. /auth/login on a
    deployment without OIDC) is a feature this deployment does not offer, not a server fault:
    a WARNING, like the 4xx answers."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) == 501 and record.levelno > logging.WARNING:
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True
