"""`cpctl login`: OIDC authorization code flow with PKCE and a loopback redirect (RFC 8252).

cpctl is a public ("native") client: no secret. It listens on 127.0.0.1 on a free port,
sends the browser to the provider with redirect_uri http://127.0.0.1:<port>/callback (the
provider ignores the port of loopback redirects, RFC 8252 §7.3), checks `state`, and
exchanges the code with the PKCE verifier. The tokens are kept in the user's config
directory with mode 0600; the access token (a JWT for the API's resource indicator) is
sent as the bearer token and refreshed with the refresh token when it expires.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import webbrowser
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

from ._config import config_dir, write_private

EXPIRY_MARGIN = 30  # seconds: refresh a token this close to expiry


class LoginError(Exception):
    """Sign-in failed or no usable token is stored; the message says what to do."""


def token_path() -> Path:
    return config_dir() / "token.json"


def save_token(data: dict) -> Path:
    path = token_path()
    write_private(path, json.dumps(data))
    return path


def load_token() -> dict | None:
    try:
        return json.loads(token_path().read_text())
    except FileNotFoundError:
        return None


def forget_token() -> bool:
    try:
        token_path().unlink()
        return True
    except FileNotFoundError:
        return False


def _post_form(url: str, form: dict, timeout: float = 15) -> dict:
    body = urllib.parse.urlencode({k: v for k, v in form.items() if v}).encode()
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/x-www-form-urlencoded"})  # noqa: S310 - the provider's endpoint
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        try:
            error = json.loads(exc.read())
        except ValueError:
            error = {}
        reason = f"{error.get('error', exc.code)} {error.get('error_description', '')}".strip()
        raise LoginError(f"the identity provider refused: {reason}") from None
    except OSError as exc:
        raise LoginError(f"the identity provider cannot be reached: {exc}") from None


def discover(issuer: str) -> dict:
    url = issuer.rstrip("/") + "/.well-known/openid-configuration"
    try:
        with urllib.request.urlopen(url, timeout=15) as response:  # noqa: S310 - https or loopback issuer
            return json.loads(response.read())
    except OSError as exc:
        raise LoginError(f"cannot read the provider's discovery document {url}: {exc}") from None


@dataclass
class LoginSettings:
    issuer: str
    client_id: str
    resource: str = ""  # the API's resource indicator (RFC 8707): the access token's audience
    scope: str = "openid profile groups offline_access"
    base_url: str = ""


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(64)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


class _Callback(BaseHTTPRequestHandler):
    result: dict | None = None
    done: threading.Event

    def do_GET(self):
        parsed = urllib.parse.urlparse(self.path)
        if parsed.path != "/callback":
            self.send_error(404)
            return
        type(self).result = {k: v[0] for k, v in urllib.parse.parse_qs(parsed.query).items()}
        ok = "code" in type(self).result
        page = (
            "<!doctype html><title>cpctl</title><h1>Signed in</h1><p>You can close this window.</p>"
            if ok
            else "<!doctype html><title>cpctl</title><h1>Sign-in failed</h1><p>See the terminal.</p>"
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)
        self.done.set()

    def log_message(self, *args):
        pass


def login(settings: LoginSettings, *, open_browser: bool = True, timeout: float = 300) -> dict:
    """Runs the flow; stores and returns the token record."""
    metadata = discover(settings.issuer)
    handler = type("Callback", (_Callback,), {"result": None, "done": threading.Event()})
    server = HTTPServer(("127.0.0.1", 0), handler)
    redirect_uri = f"http://127.0.0.1:{server.server_port}/callback"
    verifier, challenge = _pkce()
    state = secrets.token_urlsafe(24)
    params = {
        "response_type": "code",
        "client_id": settings.client_id,
        "redirect_uri": redirect_uri,
        "scope": settings.scope,
        "state": state,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": settings.resource,
        # Providers issue a refresh token only when consent is asked for offline_access.
        "prompt": "consent" if "offline_access" in settings.scope.split() else "",
    }
    url = metadata["authorization_endpoint"] + "?" + urllib.parse.urlencode({k: v for k, v in params.items() if v})
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        print(f"Open this address to sign in:\n{url}", file=sys.stderr, flush=True)
        if open_browser:
            webbrowser.open(url)
        if not handler.done.wait(timeout):
            raise LoginError(f"no answer from the browser within {timeout:.0f} s; run cpctl login again")
    finally:
        server.shutdown()
        server.server_close()
    answer = handler.result or {}
    if answer.get("state") != state:
        raise LoginError("the sign-in answer does not carry this login's state; run cpctl login again")
    if "error" in answer:
        raise LoginError(
            f"the identity provider refused sign-in: {answer['error']} {answer.get('error_description', '')}"
        )
    tokens = _post_form(
        metadata["token_endpoint"],
        {
            "grant_type": "authorization_code",
            "code": answer.get("code", ""),
            "redirect_uri": redirect_uri,
            "client_id": settings.client_id,
            "code_verifier": verifier,
            "resource": settings.resource,
        },
    )
    record = {
        "issuer": settings.issuer,
        "client_id": settings.client_id,
        "resource": settings.resource,
        "base_url": settings.base_url,
        "token_endpoint": metadata["token_endpoint"],
    }
    record.update(_token_fields(tokens, previous={}))
    save_token(record)
    return record


def _token_fields(tokens: dict, previous: dict) -> dict:
    return {
        "access_token": tokens.get("access_token", ""),
        "id_token": tokens.get("id_token", previous.get("id_token", "")),
        # Rotating providers send a new refresh token; others keep the old one valid.
        "refresh_token": tokens.get("refresh_token", previous.get("refresh_token", "")),
        "scope": tokens.get("scope", previous.get("scope", "")),
        "expires_at": int(time.time()) + int(tokens.get("expires_in", 300)),
    }


def bearer() -> tuple[str, dict]:
    """The stored bearer token, refreshed first when it is (nearly) expired."""
    record = load_token()
    if record is None:
        raise LoginError("not signed in: run `cpctl login` (or set CP_API_KEY)")
    if record["expires_at"] - EXPIRY_MARGIN <= time.time():
        if not record.get("refresh_token"):
            raise LoginError("the stored sign-in has expired and cannot be refreshed: run `cpctl login`")
        try:
            tokens = _post_form(
                record["token_endpoint"],
                {
                    "grant_type": "refresh_token",
                    "refresh_token": record["refresh_token"],
                    "client_id": record["client_id"],
                    "resource": record.get("resource", ""),
                },
            )
        except LoginError as exc:
            raise LoginError(f"cannot refresh the stored sign-in ({exc}): run `cpctl login`") from None
        record.update(_token_fields(tokens, previous=record))
        save_token(record)
    token = record["access_token"]
    # An opaque access token means no resource was registered for the API; the ID token
    # (audience: this client) is then the only JWT the API could verify.
    if token.count(".") != 2 and record.get("id_token"):
        token = record["id_token"]
    return token, record
