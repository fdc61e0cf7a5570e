"""Client / AsyncClient (namespace-scoped) and AdminClient / AsyncAdminClient (NamespaceService)."""

from __future__ import annotations

import os
import re
import urllib.parse

from ._gen.containers.api.v1 import identity_pb2
from ._transport import AsyncTransport, RetryPolicy, SyncTransport
from .admin import AdminMethods
from .errors import ConfigurationError
from .resources import Egress, Environments, Jobs, Sandboxes, Uploads, Workspaces

DEFAULT_TIMEOUT = 30.0  # seconds per attempt, sent as Connect-Timeout-Ms
DEFAULT_RETRY = RetryPolicy()


class _Connected:
    """Configuration shared by the four clients; CP_BASE_URL / CP_API_KEY / CP_NAMESPACE fill gaps."""

    _transport_class: type[SyncTransport] | type[AsyncTransport]
    _scoped: bool  # whether the client fills in its namespace

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        namespace: str | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        retry: RetryPolicy = DEFAULT_RETRY,
    ):
        base_url = check_base_url(base_url or os.environ.get("CP_BASE_URL", ""))
        token = check_credential(api_key or os.environ.get("CP_API_KEY") or "") or None
        if self._scoped:
            namespace = namespace or os.environ.get("CP_NAMESPACE") or None
        elif namespace:
            raise TypeError("AdminClient names the namespace in each call; it takes no namespace=")
        transport = self._transport_class(
            base_url, token, namespace=namespace, timeout=timeout, retry=retry, scoped=self._scoped
        )
        super().__init__(transport)


# What an HTTP header value may carry, minus spaces: a key or a JWT is visible ASCII.
_TOKEN = re.compile(r"[\x21-\x7e]+")


def check_base_url(base_url: str) -> str:
    """`http(s)://host[:port][/prefix]`, or ConfigurationError naming the fix (not retried)."""
    base_url = base_url.strip()
    if not base_url:
        raise ConfigurationError("base_url is required (or set CP_BASE_URL), e.g. http://127.0.0.1:8000")
    parts = urllib.parse.urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigurationError(
            f"base_url {base_url!r} is not an http:// or https:// address; e.g. http://{base_url.split('://')[-1]}"
        )
    return base_url


def check_credential(token: str) -> str:
    """The credential without surrounding whitespace (a trailing newline from a file or a
    Kubernetes secret); anything else a header cannot carry is refused without echoing it."""
    token = token.strip()
    if token and not _TOKEN.fullmatch(token):
        position = next(i for i, c in enumerate(token) if not _TOKEN.fullmatch(c))
        raise ConfigurationError(
            f"api_key: character {position + 1} of {len(token)} is not visible ASCII "
            "(a key or a JWT never has spaces or control characters); check where it was read from"
        )
    return token


class _SyncLifecycle:
    def close(self) -> None:
        self._transport.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _AsyncLifecycle:
    async def close(self) -> None:
        await self._transport.close()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()


class _Scoped:
    """The namespace-scoped resources, on one transport."""

    def __init__(self, transport):
        self._transport = transport
        self.jobs = Jobs(transport)
        self.sandboxes = Sandboxes(transport)
        self.environments = Environments(transport)
        self.workspaces = Workspaces(transport)
        self.egress = Egress(transport)
        self.uploads = Uploads(transport)

    def whoami(self) -> identity_pb2.WhoAmIResponse:
        """The caller as the server resolved it (awaitable on AsyncClient). A credential with a
        role in exactly one namespace makes that the client's namespace, with no second call."""
        return self._transport.whoami()

    def resolve_namespace(self) -> str:
        """The namespace calls act in, asking WhoAmI once if it is not known (awaitable on
        AsyncClient). ConfigurationError when the credential holds roles in several."""
        return self._transport.resolve_namespace()


class Client(_Connected, _SyncLifecycle, _Scoped):
    """The namespace-scoped client: `client.jobs.run("busybox", command=["true"])`.

    Configured from CP_BASE_URL / CP_API_KEY when no arguments are given. `api_key` may be a
    `cpk_` key or a human's bearer JWT. The namespace is learned with WhoAmI on first use (a
    credential with roles in several namespaces must name one). Calls that fail `unavailable`
    are retried with backoff when they have no side effects; every failure raises a typed
    `cpsdk.errors.Error`. NamespaceService is not reachable from here: see AdminClient.
    """

    _transport_class = SyncTransport
    _scoped = True

    @property
    def namespace(self) -> str:
        """The namespace calls act in (asks WhoAmI on first use; see resolve_namespace)."""
        return self._transport.resolve_namespace()


class AsyncClient(_Connected, _AsyncLifecycle, _Scoped):
    """Client for asyncio: the same methods, awaited; `list()` gives an async iterator."""

    _transport_class = AsyncTransport
    _scoped = True

    @property
    def namespace(self) -> str:
        """The namespace calls act in, as on Client; a property cannot await WhoAmI, so before
        the first call (or `await client.resolve_namespace()`) it is known only when given."""
        if self._transport.namespace is None:
            raise ConfigurationError(
                "namespace not known yet: `await client.resolve_namespace()` first, or pass namespace="
            )
        return self._transport.namespace


class AdminClient(_Connected, _SyncLifecycle, AdminMethods):
    """The separate raw client for NamespaceService (admin callers only), kept apart from `Client`."""

    _transport_class = SyncTransport
    _scoped = False


class AsyncAdminClient(_Connected, _AsyncLifecycle, AdminMethods):
    """AdminClient for asyncio."""

    _transport_class = AsyncTransport
    _scoped = False
