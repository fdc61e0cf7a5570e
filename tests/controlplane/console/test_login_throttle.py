"""/admin/login/ throttling (django-axes): per account and per client address, unlocked by time
or by manage.py axes_reset_username; the API and single sign-on are not affected."""

import io

import pytest
from django.conf import settings
from django.core.management import call_command
from django.urls import reverse

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/"


def attempt(client, username: str, password: str, address: str = "203.0.113.7"):
    return client.post(LOGIN, {"username": username, "password": password}, REMOTE_ADDR=address)


def fail(client, times: int, username: str = "admin", address: str = "203.0.113.7") -> None:
    for n in range(1, times + 1):
        # The form with its error, until the failure that reaches the limit: that one locks.
        expected = 429 if n == settings.AXES_FAILURE_LIMIT else 200
        assert attempt(client, username, "wrong", address).status_code == expected


def test_repeated_failures_lock_the_account_even_with_the_right_password(client, admin_user):
    fail(client, settings.AXES_FAILURE_LIMIT)
    response = attempt(client, "admin", "password")
    assert response.status_code == 429
    assert "manage.py axes_reset_username" in response.content.decode()
    assert client.get(reverse("admin:index")).status_code == 302  # not signed in


def test_the_account_is_locked_from_every_client(client, admin_user):
    fail(client, settings.AXES_FAILURE_LIMIT, address="203.0.113.7")
    assert attempt(client, "admin", "password", address="198.51.100.9").status_code == 429


def test_a_client_guessing_many_accounts_is_locked(client, admin_user):
    for n in range(settings.AXES_FAILURE_LIMIT - 1):
        fail(client, 1, username=f"guess{n}")
    assert attempt(client, "someone", "wrong").status_code == 429
    assert attempt(client, "admin", "password").status_code == 429
    assert attempt(client, "admin", "password", address="198.51.100.9").status_code == 302


def test_a_success_resets_the_count(client, admin_user):
    fail(client, settings.AXES_FAILURE_LIMIT - 1)
    assert attempt(client, "admin", "password").status_code == 302
    client.logout()
    fail(client, settings.AXES_FAILURE_LIMIT - 1)
    assert attempt(client, "admin", "password").status_code == 302


def test_the_break_glass_account_is_unlocked_with_axes_reset(client, admin_user):
    fail(client, settings.AXES_FAILURE_LIMIT)
    assert attempt(client, "admin", "password").status_code == 429
    call_command("axes_reset_username", "admin", stdout=io.StringIO())
    call_command("axes_reset_ip", "203.0.113.7", stdout=io.StringIO())
    assert attempt(client, "admin", "password").status_code == 302
    assert client.get(reverse("admin:index")).status_code == 200


def test_a_locked_out_client_still_reaches_the_api(client, rpc, admin_user, admin_key):
    fail(client, settings.AXES_FAILURE_LIMIT)
    result = rpc("containers.api.v1.NamespaceService/GetNamespace", {"namespace": "team-a"}, token=admin_key)
    assert result.status == 200, result
