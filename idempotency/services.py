"""Retries never duplicate: creating calls accept a requestId (AIP-155).

`@idempotent(...)` wraps a creating service function (inside its transaction). Given a
`request_id`, the first call records (principal, method, requestId, fingerprint of the
request) before it creates anything and stores what it created; a retry with the same id
from the same principal gets that resource again and creates nothing. A retry with the
same id but different request fields is `invalid_argument`. Concurrent retries race on
the unique constraint: one inserts, the others wait for it to commit and then replay.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac

from controlplane.errors import Error

from .models import RequestRecord

MAX_REQUEST_ID_LENGTH = 128
_REQUEST_ID_RE = re.compile(r"[\x21-\x7e]+")  # printable ASCII, no spaces (a UUID is recommended)


def idempotent(method: str, *, reference: Callable, replay: Callable):
    """Decorates `fn(*, actor, ..., request_id="")`.

    `reference(result) -> str` names what the call created; `replay(reference)` returns it
    again for a retry (or raises, when it cannot be given twice).
    """

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*, actor, request_id: str = "", **fields):
            if not request_id:
                return fn(actor=actor, **fields)
            validate_request_id(request_id)
            key = {"principal": actor.describe(), "method": method, "request_id": request_id}
            claim = _claim(key, _fingerprint(fields))
            if claim.result:  # an earlier call with this id: give back what it made
                return replay(claim.result)
            result = fn(actor=actor, **fields)
            claim.result = reference(result)
            claim.save(update_fields=["result"])
            return result

        return wrapper

    return decorate


def validate_request_id(request_id: str) -> str:
    if len(request_id) > MAX_REQUEST_ID_LENGTH:
        raise Error.invalid_argument(
            "requestId", f"must be at most {MAX_REQUEST_ID_LENGTH} characters, got {len(request_id)}"
        )
    if not _REQUEST_ID_RE.fullmatch(request_id):
        raise Error.invalid_argument("requestId", "must be printable ASCII without spaces, e.g. a UUID")
    return request_id


def _claim(key: dict, fingerprint: str) -> RequestRecord:
    """This call's new record (result empty), or the earlier call's record (result set)."""
    record = RequestRecord.objects.filter(**key).first()
    if record is None:
        try:
            with transaction.atomic():  # a savepoint: losing the race undoes only the insert
                return RequestRecord.objects.create(**key, fingerprint=fingerprint)
        except IntegrityError:
            # A concurrent call with this id committed first (PostgreSQL made us wait for it).
            record = RequestRecord.objects.get(**key)
    if record.fingerprint != fingerprint:
        raise Error.invalid_argument(
            "requestId", "was already used for a different request by this caller; send a new requestId"
        )
    return record


def _fingerprint(fields: dict) -> str:
    # Keyed (HMAC with SECRET_KEY), not a bare hash: fields such as a job's env values may be
    # secrets, and a bare hash of a guessable request could be confirmed offline.
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"), default=str)
    return salted_hmac("idempotency.fingerprint", canonical, algorithm="sha256").hexdigest()


def purge_expired(*, now=None) -> int:
    """Deletes the records older than REQUEST_ID_RETENTION_HOURS; returns how many."""
    cutoff = (now or timezone.now()) - timedelta(hours=settings.REQUEST_ID_RETENTION_HOURS)
    deleted, _ = RequestRecord.objects.filter(created_at__lt=cutoff).delete()
    return deleted
