"""API key plaintexts exist only in the issue response: never stored, never logged.

Also the cost side of the key design: a mistyped key costs no query, a valid one one.
"""

from __future__ import annotations

import hashlib
import io
import logging
from datetime import timedelta

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apikeys import authentication, tokens
from apikeys.authentication import ApiKeyAuthenticator
from apikeys.models import ApiKey
from controlplane.auth import Role
from controlplane.auth.authenticators import AuthenticationFailed, authenticate
from tests.support.connect import NS

pytestmark = pytest.mark.django_db


def _secret_parts(plaintext: str) -> list[str]:
    """The plaintext, and its random body alone (in case something strips prefix or checksum)."""
    return [plaintext, plaintext[len(tokens.PREFIX) : len(tokens.PREFIX) + tokens.RANDOM_LENGTH]]


def _every_stored_text() -> list[tuple[str, str]]:
    """(table, text of every cell) for every table in the database, sessions decoded."""
    cells = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            columns = [c[0] for c in cursor.description]
            for row in cursor.fetchall():
                for column, value in zip(columns, row, strict=True):
                    text = value.decode("latin-1") if isinstance(value, bytes | memoryview) else str(value)
                    cells.append((f"{table}.{column}", text))
                    if table == "django_session" and column == "session_data":
                        cells.append((f"{table}.{column} (decoded)", str(SessionStore().decode(text))))
    return cells


@pytest.fixture
def issued(rpc, admin_key, make_key, client, django_user_model):
    """Keys issued every way there is, with a signed-in session in the database too."""
    client.force_login(django_user_model.objects.create_superuser("root", password=None))
    plaintexts = [admin_key, make_key("team-a", Role.OPERATOR, expires_at=timezone.now() + timedelta(days=1))]
    body = {"namespace": "team-a", "name": "ci", "role": "ROLE_VIEWER"}
    plaintexts.append(rpc(NS + "IssueApiKey", body, token=admin_key).body["plaintext"])
    plaintexts.append(rpc(NS + "IssueApiKey", body).body["plaintext"])  # over the session cookie
    stdout = io.StringIO()
    options = ["--namespace=team-a", "--role=ADMIN", "--name=ops"]
    call_command("issue_api_key", *options, stdout=stdout, stderr=io.StringIO())
    plaintexts.append(stdout.getvalue().strip())
    assert all(tokens.is_well_formed(p) for p in plaintexts) and len(set(plaintexts)) == 5
    for plaintext in plaintexts:  # use them, so that last_used and sessions are written too
        assert rpc(NS + "ListApiKeys", {}, token=plaintext).status in (200, 403)
    return plaintexts


def test_no_table_contains_a_plaintext_key(issued):
    cells = _every_stored_text()
    assert any(table.startswith("apikeys_apikey.") for table, _ in cells)
    for plaintext in issued:
        for secret in _secret_parts(plaintext):
            leaks = [where for where, text in cells if secret in text]
            assert not leaks, f"plaintext stored in {leaks}"


def test_the_stored_digest_is_sha256(issued):
    for plaintext in issued:
        key = ApiKey.objects.get(digest=hashlib.sha256(plaintext.encode()).hexdigest())
        assert len(key.digest) == 64 and key.hint == plaintext[-4:]
    assert ApiKey.objects.count() == len(issued)


def test_plaintext_never_logged_nor_echoed(rpc, admin_key, make_key, caplog):
    with caplog.at_level(logging.DEBUG), CaptureQueriesContext(connection) as queries:
        caplog.set_level(logging.DEBUG, logger="django.db.backends")
        body = {"namespace": "team-a", "name": "ci", "role": "ROLE_ADMIN"}
        plaintext = rpc(NS + "IssueApiKey", body, token=admin_key).body["plaintext"]
        direct = make_key("team-a", Role.VIEWER)
        answers = [rpc(NS + "ListApiKeys", {}, token=plaintext), rpc(NS + "ListApiKeys", {}, token=direct)]
        key_id = ApiKey.objects.get(digest=tokens.digest(plaintext)).key_id
        rpc(NS + "RevokeApiKey", {"keyId": key_id}, token=admin_key)
        answers.append(rpc(NS + "ListApiKeys", {}, token=plaintext))  # refused: revoked
        answers.append(rpc(NS + "ListApiKeys", {}, token=plaintext[:-1] + "0"))  # refused: checksum
    assert [a.status for a in answers] == [200, 403, 401, 401]
    assert queries.captured_queries and caplog.records
    logged = "\n".join(f"{r.getMessage()} {r.args!r}" for r in caplog.records)
    sql = "\n".join(q["sql"] for q in queries.captured_queries)
    for secret in _secret_parts(plaintext) + _secret_parts(direct):
        assert secret not in logged
        assert secret not in sql
        assert all(secret not in a.raw.decode() for a in answers[1:])


@pytest.mark.parametrize(
    "token",
    [
        "cpk_short",
        "cpk_" + "a" * 36,  # right length and alphabet, wrong checksum
        "cpk_" + "!" * 36,
        "cpk_" + "a" * 37,
    ],
)
def test_malformed_keys_are_refused_without_a_query(token, rf, django_assert_num_queries):
    with django_assert_num_queries(0):
        with pytest.raises(AuthenticationFailed):
            ApiKeyAuthenticator().authenticate(token)
        principal = authenticate(rf.post("/", HTTP_AUTHORIZATION=f"Bearer {token}"))
    assert not principal.is_authenticated


def test_bad_checksum_of_a_real_key_is_refused_without_a_query(namespace, make_key, django_assert_num_queries):
    plaintext = make_key("team-a", Role.ADMIN)
    last = plaintext[-1]
    mistyped = plaintext[:-1] + ("a" if last != "a" else "b")
    with django_assert_num_queries(0), pytest.raises(AuthenticationFailed, match="malformed"):
        ApiKeyAuthenticator().authenticate(mistyped)


def test_resolving_a_valid_key_is_one_query(namespace, make_key, django_assert_num_queries):
    plaintext = make_key("team-a", Role.OPERATOR)
    ApiKey.objects.update(last_used_at=timezone.now())
    with django_assert_num_queries(1) as captured:
        principal = ApiKeyAuthenticator().authenticate(plaintext)
    assert tokens.digest(plaintext) in captured.captured_queries[0]["sql"]
    assert dict(principal.roles) == {"team-a": Role.OPERATOR} and not principal.admin


def test_last_used_is_written_at_most_once_a_window(namespace, make_key, django_assert_num_queries):
    plaintext = make_key("team-a", Role.VIEWER)
    with django_assert_num_queries(2):  # never used: resolve, then write last_used
        ApiKeyAuthenticator().authenticate(plaintext)
    first = ApiKey.objects.get().last_used_at
    assert first is not None
    with django_assert_num_queries(1):  # within the window: no write
        ApiKeyAuthenticator().authenticate(plaintext)
    ApiKey.objects.update(last_used_at=timezone.now() - timedelta(minutes=2))
    # A cached record keeps the last_used it was read with: this process's memo of its own
    # write keeps it from writing on every call once that value is old.
    with django_assert_num_queries(1):
        ApiKeyAuthenticator().authenticate(plaintext)
    authentication._touched.clear()  # the window has passed for this process too
    with django_assert_num_queries(2):
        ApiKeyAuthenticator().authenticate(plaintext)
    assert ApiKey.objects.get().last_used_at > first
