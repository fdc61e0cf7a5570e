"""Every NamespaceService method × every kind of credential → the exact Connect outcome.

The rules: NamespaceService is admin-only; a missing, malformed, unknown, revoked or
expired credential is unauthenticated, a valid one without the admin role is
permission_denied; the header wins over the cookie, and a bad header is unauthenticated
even beside a valid cookie.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apikeys import tokens
from apikeys.models import ApiKey
from audit.models import AuditEvent
from controlplane.auth import Role
from tests.support.connect import NAMESPACE_SERVICE, NS, assert_outcome

pytestmark = pytest.mark.django_db

METHODS = [method.name for method in NAMESPACE_SERVICE.methods]


# ---- credentials: each sets up the client and returns the Authorization header (or None) ----


def _bearer(token):
    return f"Bearer {token}"


def _well_formed_unknown():
    return tokens.generate()


def _bad_checksum():
    token = tokens.generate()
    last = token[-1]
    return token[:-1] + ("A" if last != "A" else "B")


def _key_row(plaintext) -> ApiKey:
    return ApiKey.objects.get(digest=tokens.digest(plaintext))


def _revoked(world):
    plaintext = world.make_key("team-a", Role.ADMIN)
    ApiKey.objects.filter(digest=tokens.digest(plaintext)).update(revoked_at=timezone.now())
    return _bearer(plaintext)


def _expired(world):
    plaintext = world.make_key("team-a", Role.ADMIN, expires_at=timezone.now() + timedelta(hours=1))
    ApiKey.objects.filter(digest=tokens.digest(plaintext)).update(expires_at=timezone.now() - timedelta(seconds=1))
    return _bearer(plaintext)


def _session(world, *, superuser=True):
    user = world.users.objects.create_user("alice", password=PASSWORD, is_superuser=superuser, is_staff=superuser)
    world.client.force_login(user)


def _real_login(world):
    """Signs in through Django admin's login form: a real session, not force_login's."""
    world.users.objects.create_superuser("root", password=PASSWORD)
    response = world.client.post("/admin/login/", {"username": "root", "password": PASSWORD, "next": "/admin/"})
    assert response.status_code == 302 and "cp_session" in response.cookies, response


def _superuser_session(world):
    _session(world)
    return None


def _bad_cookie(world):
    world.client.cookies["cp_session"] = "not-a-session"


PASSWORD = "pw-alice-123456"
ALLOWED = ("ok", 200)
UNAUTHENTICATED = ("unauthenticated", 401)
PERMISSION_DENIED = ("permission_denied", 403)

# case → (set-up returning the Authorization header or None, expected (code, status)).
CASES = {
    "no credential": (lambda w: None, UNAUTHENTICATED),
    "Bearer without a token": (lambda w: "Bearer", UNAUTHENTICATED),
    "Bearer with blanks only": (lambda w: "Bearer   ", UNAUTHENTICATED),
    "wrong scheme": (lambda w: "Basic " + w.admin_key, UNAUTHENTICATED),
    "token without a scheme": (lambda w: w.admin_key, UNAUTHENTICATED),
    "cpk_ too short": (lambda w: _bearer("cpk_short"), UNAUTHENTICATED),
    "not a cpk_ token": (lambda w: _bearer("ghp_" + "a" * 36), UNAUTHENTICATED),
    "bad checksum": (lambda w: _bearer(_bad_checksum()), UNAUTHENTICATED),
    "unknown key": (lambda w: _bearer(_well_formed_unknown()), UNAUTHENTICATED),
    "revoked key": (_revoked, UNAUTHENTICATED),
    "expired key": (_expired, UNAUTHENTICATED),
    "VIEWER key": (lambda w: _bearer(w.make_key("team-a", Role.VIEWER)), PERMISSION_DENIED),
    "OPERATOR key": (lambda w: _bearer(w.make_key("team-a", Role.OPERATOR)), PERMISSION_DENIED),
    "ADMIN key": (lambda w: _bearer(w.admin_key), ALLOWED),
    "ADMIN key of another namespace": (lambda w: _bearer(w.make_key("team-b", Role.ADMIN)), ALLOWED),
    "superuser session cookie": (_superuser_session, ALLOWED),
    "superuser signed in at /admin/login/": (_real_login, ALLOWED),
    "non-admin session cookie": (lambda w: _session(w, superuser=False), PERMISSION_DENIED),
    "bad session cookie": (lambda w: _bad_cookie(w), UNAUTHENTICATED),
    "valid key with a bad cookie": (lambda w: (_bad_cookie(w), _bearer(w.admin_key))[1], ALLOWED),
    "VIEWER key with a superuser cookie": (
        lambda w: (_superuser_session(w), _bearer(w.make_key("team-a", Role.VIEWER)))[1],
        PERMISSION_DENIED,
    ),
    "bad header with a valid cookie": (lambda w: (_superuser_session(w), "Bearer cpk_short")[1], UNAUTHENTICATED),
    "unknown key with a valid cookie": (
        lambda w: (_superuser_session(w), _bearer(_well_formed_unknown()))[1],
        UNAUTHENTICATED,
    ),
}

# A valid request per method, so that an allowed caller gets a plain success.
VALID_BODIES = {
    "CreateNamespace": lambda w: {"namespace": "team-new", "groups": [{"oidcGroup": "eng", "role": "ROLE_VIEWER"}]},
    "GetNamespace": lambda w: {"namespace": "team-a"},
    "ListNamespaces": lambda w: {"pageSize": 10},
    "UpdateNamespace": lambda w: {"namespace": "team-a", "groups": [{"oidcGroup": "ops", "role": "ROLE_OPERATOR"}]},
    "RegisterInternalTarget": lambda w: {
        "namespace": "team-a",
        "target": {"name": "db", "host": "10.0.0.5", "ports": [5432]},
    },
    "IssueApiKey": lambda w: {"namespace": "team-a", "name": "ci", "role": "ROLE_VIEWER"},
    "ListApiKeys": lambda w: {"namespace": "team-a"},
    "RevokeApiKey": lambda w: {"keyId": _key_row(w.victim_key).key_id},
}


class World:
    def __init__(self, client, make_key, admin_key, django_user_model):
        self.client = client
        self.make_key = make_key
        self.admin_key = admin_key
        self.users = django_user_model
        self.victim_key = make_key("team-a", Role.VIEWER)


@pytest.fixture
def world(client, namespace, other_namespace, make_key, admin_key, django_user_model, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # test speed only
    return World(client, make_key, admin_key, django_user_model)


def test_every_method_has_a_valid_body():
    assert set(VALID_BODIES) == set(METHODS)


# Cookie sessions speak Connect JSON only (SessionPolicy): over gRPC-Web they are refused.
SESSION_CASES = {"superuser session cookie", "superuser signed in at /admin/login/", "non-admin session cookie"}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("method", METHODS)
def test_authorization_matrix(any_protocol, world, method, case):
    setup, (code, status) = CASES[case]
    authorization = setup(world)
    headers = {"Authorization": authorization} if authorization is not None else {}
    events_before = AuditEvent.objects.count()

    result = any_protocol(NS + method, VALID_BODIES[method](world), headers=headers)

    if result.protocol == "grpc-web" and case in SESSION_CASES:
        assert_outcome(result, "invalid_argument")
    elif (code, status) == ALLOWED:
        assert result.status == 200, result
    else:
        assert_outcome(result, code, status)
    if result.status != 200:
        assert AuditEvent.objects.count() == events_before, "a refused call changed something"
