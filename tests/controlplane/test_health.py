"""/healthz (liveness, no database) and /readyz (database reachable, migrations applied)."""

import pytest
from django.db import connection


def test_healthz_touches_no_database(client):
    # No django_db mark: pytest-django makes any database access here raise.
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_readyz_answers_ready_when_the_database_is_migrated(client):
    response = client.get("/readyz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_readyz_answers_503_with_migrations_pending(client, monkeypatch):
    from controlplane import health

    monkeypatch.setattr(health, "_migrated", False)
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM django_migrations WHERE app = 'idempotency'")
    response = client.get("/readyz")
    assert response.status_code == 503 and response.json()["status"] == "migrations pending"
