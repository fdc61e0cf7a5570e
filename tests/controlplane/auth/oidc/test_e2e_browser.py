"""End to end: Debian's Chromium (Playwright) → the service (gunicorn) → npm oidc-provider → back.

Users (tests/controlplane/auth/oidc/provider.py): alice is in the platform-admin group, bob in the group bound
to OPERATOR in team-a, carol in no bound group. RPCs are made by the page itself (fetch on the
service's origin: JSON, same-origin Origin, the HttpOnly cookie attached by the browser).
"""

from __future__ import annotations

import json

import pytest
import requests

from controlplane.auth import Role
from namespaces.services import Binding, update_namespace
from tests.conftest import SYSTEM
from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS

from .provider import PASSWORD

pytestmark = pytest.mark.e2e

GET = "containers.api.v1.NamespaceService/GetNamespace"
RUN_JOB = "containers.api.v1.JobService/RunJob"
LIST_JOBS = "containers.api.v1.JobService/ListJobs"

FETCH_JSON = """async ([path, init]) => {
  const response = await fetch(path, init);
  return {status: response.status, body: await response.json()};
}"""


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop in this thread while the browser lives; the
    # ORM calls the tests make between browser steps are ordinary blocking calls.
    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, timeout=30_000)
        yield browser
        browser.close()


@pytest.fixture
def e2e(browser, transactional_db, bound_namespaces, oidc_service, oidc_provider):
    return Driver(browser, oidc_service, oidc_provider)


class Driver:
    def __init__(self, browser, service, provider):
        self.browser, self.service, self.provider = browser, service, provider

    def new_page(self):
        context = self.browser.new_context()
        context.set_default_timeout(15_000)
        page = context.new_page()
        page.seen = []
        page.on("request", lambda request: page.seen.append(request.url))
        return page

    def sign_in_on_provider_page(self, page, user: str, then: str):
        page.wait_for_selector("#login")
        assert page.url.startswith(self.provider.issuer + "/interaction/")
        page.fill("#login", user)
        page.fill("#password", PASSWORD)
        page.click("#submit")
        page.wait_for_url(self.service.url + then)

    def sign_in(self, user: str):
        page = self.new_page()
        page.goto(self.service.url + "/auth/login?next=/auth/me")
        self.sign_in_on_provider_page(page, user, "/auth/me")
        return page

    def me(self, page) -> tuple[int, dict]:
        result = page.evaluate(FETCH_JSON, ["/auth/me", {}])
        return result["status"], result["body"]

    def rpc(self, page, procedure: str, body: dict) -> tuple[int, dict]:
        init = {"method": "POST", "headers": {"Content-Type": "application/json"}, "body": json.dumps(body)}
        result = page.evaluate(FETCH_JSON, ["/" + procedure, init])
        return result["status"], result["body"]

    def admin_allowed(self, page) -> bool:
        page.goto(self.service.url + "/admin/")
        if page.url == self.service.url + "/admin/":
            assert "Operator console" in page.title()
            return True
        assert page.url.startswith(self.service.url + "/admin/login/")
        assert "not authorized to access this page" in page.content()
        return False

    def session_cookie(self, page) -> dict:
        (cookie,) = [c for c in page.context.cookies() if c["name"] == "cp_session"]
        return cookie


def test_platform_admin_signs_in_through_the_admin_sso_button(e2e):
    page = e2e.new_page()
    page.goto(e2e.service.url + "/admin/")
    page.wait_for_url(e2e.service.url + "/admin/login/?next=/admin/")
    page.click("text=Sign in with SSO")
    e2e.sign_in_on_provider_page(page, "alice", "/admin/")
    assert "Operator console" in page.title()

    status, me = e2e.me(page)
    assert status == 200
    assert (me["subject"], me["admin"]) == ("alice", True)
    status, namespace = e2e.rpc(page, GET, {"namespace": "team-b"})  # admin: any namespace, no binding needed
    assert (status, namespace["namespace"]) == (200, "team-b")
    status, namespace = e2e.rpc(page, GET, {"namespace": "team-a"})
    assert status == 200
    assert namespace["namespace"] == "team-a"
    page.context.close()


def test_operator_signs_in_and_is_held_to_its_role(e2e):
    page = e2e.sign_in("bob")
    authorize = [u for u in page.seen if u.startswith(e2e.provider.issuer + "/auth?")]
    assert authorize and "code_challenge_method=S256" in authorize[0] and "code_challenge=" in authorize[0]
    (callback,) = [u for u in page.seen if u.startswith(e2e.service.url + "/auth/callback?")]

    cookie = e2e.session_cookie(page)
    assert cookie["httpOnly"] is True
    assert cookie["sameSite"] == "Lax"
    assert "cp_session" not in page.evaluate("document.cookie")  # no script ever sees the credential

    status, me = e2e.me(page)
    assert status == 200
    assert me["subject"] == "bob"
    assert me["admin"] is False
    assert me["namespaces"] == [{"namespace": "team-a", "role": "ROLE_OPERATOR"}]
    # OPERATOR in team-a: may run a job there, not in team-b.
    status, run = e2e.rpc(page, RUN_JOB, {"namespace": "team-a", "image": "busybox:1.36", "command": ["true"]})
    assert status == 200, run
    assert run["job"]["namespace"] == "team-a"
    status, error = e2e.rpc(page, RUN_JOB, {"namespace": "team-b", "image": "busybox:1.36", "command": ["true"]})
    assert (status, error["code"]) == (403, "permission_denied")
    # NamespaceService is admin-only: refused in bob's own namespace and in another one.
    status, error = e2e.rpc(page, GET, {"namespace": "team-a"})
    assert (status, error["code"]) == (403, "permission_denied")
    status, error = e2e.rpc(page, GET, {"namespace": "team-b"})
    assert (status, error["code"]) == (403, "permission_denied")
    assert e2e.admin_allowed(page) is False

    # A binding added while bob is signed in shows on the next /auth/me.
    update_namespace(actor=SYSTEM, name="team-b", groups=[Binding("staff", Role.VIEWER)])
    page.goto(e2e.service.url + "/auth/me")
    assert e2e.me(page)[1]["namespaces"] == [
        {"namespace": "team-a", "role": "ROLE_OPERATOR"},
        {"namespace": "team-b", "role": "ROLE_VIEWER"},
    ]

    # Replaying the completed callback fails (its state was used up) and changes nothing.
    response = page.goto(callback)
    assert response.status == 401
    assert response.json()["code"] == "unauthenticated"
    assert e2e.me(page)[0] == 200

    # Logout ends the session server-side: the old cookie, presented again, is unauthenticated.
    old = cookie["value"]
    response = page.goto(e2e.service.url + "/auth/logout")
    assert response.json() == {"signedOut": True}
    assert not [c for c in page.context.cookies() if c["name"] == "cp_session"]
    assert e2e.me(page)[0] == 401
    again = requests.get(e2e.service.url + "/auth/me", cookies={"cp_session": old}, timeout=10)
    assert (again.status_code, again.json()["code"]) == (401, "unauthenticated")
    rpc = requests.post(
        e2e.service.url + "/" + GET,
        json={"namespace": "team-a"},
        cookies={"cp_session": old},
        headers={"Origin": e2e.service.url},
        timeout=10,
    )
    assert (rpc.status_code, rpc.json()["code"]) == (401, "unauthenticated")
    page.context.close()


def test_user_in_no_bound_group_gets_nothing(e2e):
    page = e2e.sign_in("carol")
    status, me = e2e.me(page)
    assert status == 200
    assert (me["subject"], me["admin"], me["namespaces"]) == ("carol", False, [])
    status, error = e2e.rpc(page, GET, {"namespace": "team-a"})
    assert (status, error["code"]) == (403, "permission_denied")
    assert e2e.admin_allowed(page) is False
    page.context.close()


def test_cookie_rpc_from_another_origin_is_refused(e2e):
    page = e2e.sign_in("alice")
    cookie = e2e.session_cookie(page)["value"]
    response = requests.post(
        e2e.service.url + "/" + GET,
        json={"namespace": "team-a"},
        cookies={"cp_session": cookie},
        headers={"Origin": "https://evil.example"},
        timeout=10,
    )
    assert (response.status_code, response.json()["code"]) == (403, "permission_denied")
    page.context.close()


def test_bearer_token_from_the_provider_works_against_the_server(e2e):
    token = e2e.provider.cli_sign_in("bob", resource=e2e.provider.api_resource)["access_token"]
    response = requests.get(e2e.service.url + "/auth/me", headers={"Authorization": f"Bearer {token}"}, timeout=10)
    assert response.status_code == 200
    assert response.json()["namespaces"] == [{"namespace": "team-a", "role": "ROLE_OPERATOR"}]
    # The same token calls the API directly: allowed in team-a, refused in team-b.
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    for namespace, status in (("team-a", 200), ("team-b", 403)):
        response = requests.post(
            f"{e2e.service.url}/{LIST_JOBS}", json={"namespace": namespace}, headers=headers, timeout=10
        )
        assert response.status_code == status, response.text
