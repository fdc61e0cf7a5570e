"""Fixtures for human sign-in: a real oidc-provider process, settings pointing at it, the service."""

from __future__ import annotations

import pytest

from controlplane.auth import Role, oidc
from namespaces.services import Binding, create_namespace
from tests.conftest import SYSTEM
from tests.support.live import ServiceProcess, free_port

from .provider import ADMIN_GROUP, ADMIN_SCOPE, CLIENT_ID, CLIENT_SECRET, OidcProvider


@pytest.fixture(scope="session")
def oidc_provider():
    service_port = free_port()
    provider = OidcProvider(
        redirect_uris=["http://testserver/auth/callback", f"http://127.0.0.1:{service_port}/auth/callback"]
    )
    provider.service_port = service_port
    provider.start()
    yield provider
    provider.stop()


def oidc_settings_for(provider: OidcProvider) -> dict:
    return {
        "OIDC_ISSUER": provider.issuer,
        "OIDC_CLIENT_ID": CLIENT_ID,
        "OIDC_CLIENT_SECRET": CLIENT_SECRET,
        "OIDC_ADMIN_SCOPE": ADMIN_SCOPE,
        "OIDC_ADMIN_GROUP": ADMIN_GROUP,
        "OIDC_AUDIENCES": [provider.api_resource],
    }


@pytest.fixture
def oidc_settings(settings, oidc_provider):
    """In-process tests: settings pointing at the provider, with fresh discovery/JWKS caches."""
    for name, value in oidc_settings_for(oidc_provider).items():
        setattr(settings, name, value)
    oidc.reset_caches()
    yield oidc_provider
    oidc.reset_caches()


@pytest.fixture(scope="session")
def oidc_service(oidc_provider, django_db_setup, django_db_blocker):
    """gunicorn with OIDC configured, on the port the provider's client expects."""
    env = {name: ",".join(v) if isinstance(v, list) else v for name, v in oidc_settings_for(oidc_provider).items()}
    service = ServiceProcess(env=env, port=oidc_provider.service_port).start()
    yield service
    service.stop()


@pytest.fixture
def bound_namespaces(db):
    """team-a: OPERATOR for bob's group; team-b: bound to a group none of the users has."""
    create_namespace(actor=SYSTEM, name="team-a", groups=[Binding("team-a-operators", Role.OPERATOR)])
    create_namespace(actor=SYSTEM, name="team-b", groups=[Binding("team-b-developers", Role.OPERATOR)])
