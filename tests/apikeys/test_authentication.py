"""ApiKeyAuthenticator: one indexed query per resolution, and the answers for each key state."""

from dataclasses import FrozenInstanceError
from datetime import timedelta

import pytest
from django.utils import timezone

from apikeys.authentication import ApiKeyAuthenticator, find_key, principal_for_key
from apikeys.models import ApiKey
from apikeys.services import revoke_api_key
from controlplane.auth import Kind, Role
from controlplane.auth.authenticators import AuthenticationFailed
from tests.conftest import SYSTEM


def test_resolution_is_one_query_and_last_used_is_written_once(namespace, make_key, django_assert_num_queries):
    token = make_key("team-a", Role.OPERATOR)
    authenticator = ApiKeyAuthenticator()
    with django_assert_num_queries(2):  # the lookup, and last_used on first use in the window
        principal = authenticator.authenticate(token)
    assert ApiKey.objects.get().last_used_at is not None
    with django_assert_num_queries(1):
        assert authenticator.authenticate(token) == principal
    assert principal.kind is Kind.API_KEY
    assert dict(principal.roles) == {"team-a": Role.OPERATOR}
    assert not principal.admin
    assert principal.key_id == ApiKey.objects.get().key_id
    assert principal.via == "bearer"


def test_one_principal_per_key_shared_because_it_cannot_change(namespace, make_key):
    token = make_key("team-a", Role.OPERATOR)
    authenticator = ApiKeyAuthenticator()
    first = authenticator.authenticate(token)
    assert authenticator.authenticate(token) is first  # built once per key (lru_cache), last_used aside
    with pytest.raises(FrozenInstanceError):
        first.admin = True
    with pytest.raises(TypeError):
        first.roles["team-b"] = Role.ADMIN
    key = find_key(ApiKey.objects.get().digest)
    assert principal_for_key(key._replace(role=Role.VIEWER)).roles == {"team-a": Role.VIEWER}


def test_admin_role_key_is_admin_everywhere(namespace, make_key):
    principal = ApiKeyAuthenticator().authenticate(make_key("team-a", Role.ADMIN))
    assert principal.admin
    assert principal.role_in("elsewhere") is Role.ADMIN


def test_stale_last_used_is_refreshed(namespace, make_key):
    token = make_key("team-a", Role.VIEWER)
    old = timezone.now() - timedelta(minutes=5)
    ApiKey.objects.update(last_used_at=old)
    ApiKeyAuthenticator().authenticate(token)
    assert ApiKey.objects.get().last_used_at > old


@pytest.mark.parametrize(
    ("state", "message"),
    [("revoked", "API key has been revoked"), ("expired", "API key has expired"), ("unknown", "unknown API key")],
)
def test_refused_keys(namespace, make_key, state, message):
    token = make_key("team-a", Role.ADMIN)
    key = ApiKey.objects.get()
    if state == "revoked":
        revoke_api_key(actor=SYSTEM, key_id=key.key_id)
    elif state == "expired":
        ApiKey.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    else:
        key.delete()
    with pytest.raises(AuthenticationFailed, match=message):
        ApiKeyAuthenticator().authenticate(token)


def test_key_expiring_later_is_accepted(namespace, make_key):
    token = make_key("team-a", Role.VIEWER, expires_at=timezone.now() + timedelta(days=1))
    assert ApiKeyAuthenticator().authenticate(token).roles == {"team-a": Role.VIEWER}


def test_malformed_key_needs_no_query(django_assert_num_queries, db):
    with django_assert_num_queries(0), pytest.raises(AuthenticationFailed, match="malformed"):
        ApiKeyAuthenticator().authenticate("cpk_" + "A" * 36)
