"""Runs tests/controlplane/auth/oidc/provider.mjs (npm oidc-provider) on loopback and acts as its other clients.

The test generates the provider's RSA signing key, so it can also mint tokens "from the
provider" with claims a real provider would not issue on demand (already expired, not yet
valid), next to the tokens the provider really issues.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urljoin, urlparse

import jwt
import requests
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.support.live import free_port, stop_process

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]

CLIENT_ID = "controlplane"
CLIENT_SECRET = "controlplane-test-secret-0123456789abcdefghij"
CLI_CLIENT_ID = "cp-cli"
CLI_REDIRECT = "http://127.0.0.1:9/cli-callback"  # never contacted: the code is read from the redirect
# cpctl login (RFC 8252): a public native client; the provider ignores the loopback port.
CPCTL_CLIENT_ID = "cpctl"
CPCTL_REDIRECT = "http://127.0.0.1/callback"
ADMIN_SCOPE = "cp:admin"
ADMIN_GROUP = "platform-admins"
PASSWORD = "correct horse battery staple"

USERS = {
    "alice": {"name": "Alice Admin", "email": "alice@example.test", "groups": [ADMIN_GROUP, "staff"]},
    "bob": {"name": "Bob Operator", "email": "bob@example.test", "groups": ["team-a-operators", "staff"]},
    "carol": {"name": "Carol Guest", "email": "carol@example.test", "groups": ["guests"]},
    # Whose subject is the name of the local break-glass account (issue 22, finding 4).
    "root": {"name": "Root Lookalike", "email": "root@example.test", "groups": ["team-a-operators"]},
    # Not in the admin group, but entitled to the admin scope (granted only to her).
    "dave": {"name": "Dave Scoped", "email": "dave@example.test", "groups": [], "entitlements": [ADMIN_SCOPE]},
}


def new_signing_key(kid: str | None = None):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key))
    jwk.update(kid=kid or secrets.token_hex(8), alg="RS256", use="sig")
    return key, jwk


class OidcProvider:
    def __init__(self, redirect_uris: list[str]):
        self.port = free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.api_resource = "https://controlplane.test/api"
        self.other_resource = "https://other-service.test/"
        self.private_key, self.jwk = new_signing_key()
        self.kid = self.jwk["kid"]
        self.redirect_uris = redirect_uris
        self.process: subprocess.Popen | None = None
        self._dir = tempfile.mkdtemp(prefix="oidc-provider-")
        self._output: list[str] = []

    def config(self) -> dict:
        users = {name: {**user, "password": PASSWORD} for name, user in USERS.items()}
        return {
            "port": self.port,
            "signingKey": self.jwk,
            "users": users,
            "restrictedScopes": [ADMIN_SCOPE],
            "resources": {
                self.api_resource: f"{ADMIN_SCOPE} upl:bucket:read",
                self.other_resource: "read",
            },
            "resourceClient": CLI_CLIENT_ID,
            "defaultResource": self.api_resource,
            "clients": [
                {
                    "client_id": CLIENT_ID,
                    "client_secret": CLIENT_SECRET,
                    "redirect_uris": self.redirect_uris,
                    "grant_types": ["authorization_code"],
                    "response_types": ["code"],
                    "token_endpoint_auth_method": "client_secret_post",
                },
                {
                    "client_id": CPCTL_CLIENT_ID,
                    "application_type": "native",
                    "redirect_uris": [CPCTL_REDIRECT],
                    "grant_types": ["authorization_code", "refresh_token"],
                    "response_types": ["code"],
                    "token_endpoint_auth_method": "none",
                },
                {
                    "client_id": CLI_CLIENT_ID,
                    "application_type": "native",
                    "redirect_uris": [CLI_REDIRECT],
                    "grant_types": ["authorization_code"],
                    "response_types": ["code"],
                    "token_endpoint_auth_method": "none",
                },
            ],
        }

    def start(self, timeout: float = 20) -> OidcProvider:
        node = shutil.which("node")
        if node is None:
            raise RuntimeError("node is required for the OIDC tests (Node 20, see README)")
        config_path = Path(self._dir) / "config.json"
        config_path.write_text(json.dumps(self.config()))
        self.process = subprocess.Popen(
            [node, str(HERE / "provider.mjs"), str(config_path)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        ready = threading.Event()

        def pump():
            for line in self.process.stdout:
                self._output.append(line)
                if line.startswith("ready "):
                    ready.set()

        threading.Thread(target=pump, daemon=True).start()
        if not ready.wait(timeout):
            self.stop()
            raise RuntimeError(f"oidc-provider did not start in {timeout}s:\n{self.output()}")
        return self

    def output(self) -> str:
        return "".join(self._output)

    def stop(self) -> None:
        stop_process(self.process)
        shutil.rmtree(self._dir, ignore_errors=True)

    # ---- tokens -------------------------------------------------------------------------

    def mint(self, claims: dict, *, key=None, kid: str | None = None, lifetime: int = 300) -> str:
        """A JWT signed with the provider's key (or `key`), defaulting to a valid API token."""
        now = int(time.time())
        body = {
            "iss": self.issuer,
            "sub": "bob",
            "aud": self.api_resource,
            "iat": now,
            "exp": now + lifetime,
            "groups": USERS["bob"]["groups"],
            "scope": "",
            **claims,
        }
        body = {k: v for k, v in body.items() if v is not None}
        return jwt.encode(
            body, key or self.private_key, algorithm="RS256", headers={"kid": kid or self.kid, "typ": "at+jwt"}
        )

    def sign_in(self, authorize_url: str, user: str, redirect_prefix: str, password: str = PASSWORD) -> str:
        """Follows the provider's pages as a form-submitting client; returns the redirect to the client."""
        http = requests.Session()
        url = authorize_url
        response = http.get(url, allow_redirects=False, timeout=10)
        for _ in range(12):
            if response.status_code in (302, 303):
                url = urljoin(url, response.headers["Location"])
                if url.startswith(redirect_prefix):
                    return url
                response = http.get(url, allow_redirects=False, timeout=10)
            elif response.status_code == 200 and 'id="login"' in response.text:
                action = urljoin(url, re.search(r'action="([^"]+)"', response.text).group(1))
                form = {"login": user, "password": password}
                response = http.post(action, data=form, allow_redirects=False, timeout=10)
            else:
                raise RuntimeError(f"unexpected {response.status_code} at {url}: {response.text[:500]}")
        raise RuntimeError(f"sign-in did not come back to {redirect_prefix}: stuck at {url}")

    def cli_sign_in(self, user: str, *, scope: str = "openid profile groups", resource: str | None = None) -> dict:
        """The authorization-code flow with PKCE as a CLI would do it; returns the token response."""
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        state = secrets.token_urlsafe(16)
        params = {
            "client_id": CLI_CLIENT_ID,
            "response_type": "code",
            "redirect_uri": CLI_REDIRECT,
            "scope": scope,
            "state": state,
            "nonce": secrets.token_urlsafe(16),
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
        if resource:
            params["resource"] = resource
        url = self.sign_in(f"{self.issuer}/auth?{urlencode(params)}", user, CLI_REDIRECT)
        query = parse_qs(urlparse(url).query)
        if "code" not in query or query.get("state") != [state]:
            raise RuntimeError(f"sign-in did not return a code: {url}")
        token = requests.post(
            f"{self.issuer}/token",
            data={
                "grant_type": "authorization_code",
                "code": query["code"][0],
                "redirect_uri": CLI_REDIRECT,
                "client_id": CLI_CLIENT_ID,
                "code_verifier": verifier,
                **({"resource": resource} if resource else {}),
            },
            timeout=10,
        )
        token.raise_for_status()
        return token.json()
