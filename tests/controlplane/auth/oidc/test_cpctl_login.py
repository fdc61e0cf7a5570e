"""`cpctl login` end to end: the CLI (a subprocess) → Debian's Chromium (Playwright) signs in
at npm oidc-provider → the loopback redirect → tokens stored 0600 → `cpctl whoami` as the
human, mapped through the namespaces' group bindings; refresh and logout."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.live import stop_process

from .provider import CPCTL_CLIENT_ID, PASSWORD
from .test_e2e_browser import browser  # noqa: F401 - the module's Chromium fixture

pytestmark = pytest.mark.e2e

CPCTL = str(Path(sys.executable).parent / "cpctl")


@pytest.fixture
def cli_env(tmp_path, oidc_service):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CP_")}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "config"), CP_BASE_URL=oidc_service.url)
    return env


def cpctl(env, *args, expect=0):
    result = subprocess.run([CPCTL, *args], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == expect, (args, result.stdout, result.stderr)
    return result


def sign_in_with_browser(browser, env, provider, user: str):  # noqa: F811 - browser is the fixture's value
    login = subprocess.Popen(
        [CPCTL, "login", "--issuer", provider.issuer, "--client-id", CPCTL_CLIENT_ID,
         "--resource", provider.api_resource, "--no-browser", "--wait", "60"],
        env=env, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert login.stderr.readline().startswith("Open this address")
        url = login.stderr.readline().strip()
        assert url.startswith(provider.issuer + "/auth?")
        assert "code_challenge_method=S256" in url and "redirect_uri=http%3A%2F%2F127.0.0.1%3A" in url
        context = browser.new_context()
        context.set_default_timeout(15_000)
        page = context.new_page()
        page.goto(url)
        page.fill("#login", user)
        page.fill("#password", PASSWORD)
        page.click("#submit")
        page.wait_for_selector("text=Signed in")
        assert page.url.startswith("http://127.0.0.1:") and "/callback?code=" in page.url
        context.close()
        assert login.wait(30) == 0, login.stderr.read()
        assert "token stored (refreshable: yes)" in login.stderr.read()
    finally:
        stop_process(login)


def test_cpctl_login_whoami_refresh_logout(browser, cli_env, transactional_db, bound_namespaces, oidc_provider):  # noqa: F811
    sign_in_with_browser(browser, cli_env, oidc_provider, "bob")
    token_file = Path(cli_env["XDG_CONFIG_HOME"]) / "cpctl" / "token.json"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(token_file.parent.stat().st_mode) == 0o700
    stored = json.loads(token_file.read_text())
    assert stored["refresh_token"] and stored["access_token"].count(".") == 2

    # bob is in team-a-operators, bound to OPERATOR in team-a (and in no group of team-b).
    out = cpctl(cli_env, "whoami").stdout
    assert "Subject     bob" in out and "Kind        user" in out
    assert "Namespaces  team-a=operator" in out
    job = json.loads(cpctl(cli_env, "jobs", "run", "busybox:1.36", "--json", "--", "true").stdout)
    assert job["namespace"] == "team-a" and job["createdBy"] == f"oidc:{oidc_provider.issuer}#bob"
    assert cpctl(cli_env, "admin", "ns", "get", "team-a", expect=5).stderr.startswith("cpctl: permission_denied")

    # An expired access token is refreshed with the refresh token, and stored again 0600.
    token_file.write_text(json.dumps({**stored, "expires_at": int(time.time()) - 1}))
    assert "Subject     bob" in cpctl(cli_env, "whoami").stdout
    refreshed = json.loads(token_file.read_text())
    assert refreshed["access_token"] != stored["access_token"]
    assert refreshed["expires_at"] > time.time() + 60
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600

    assert "signed out" in cpctl(cli_env, "logout").stderr
    assert not token_file.exists()
    assert "cpctl login" in cpctl(cli_env, "whoami", expect=4).stderr
