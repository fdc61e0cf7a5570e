"""Client / AsyncClient (namespace-scoped) and AdminClient / AsyncAdminClient (NamespaceService)."""

from __future__ import annotations

import os

from ._gen.containers.api.v1 import identity_pb2
from ._transport import IDENTITY, AsyncTransport, RetryPolicy, SyncTransport
from .admin import AdminMethods
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
        base_url = base_url or os.environ.get("CP_BASE_URL", "")
        if not base_url:
            raise ValueError("base_url is required (or set CP_BASE_URL), e.g. http://127.0.0.1:8000")
        token = api_key or os.environ.get("CP_API_KEY") or None
        if self._scoped:
            namespace = namespace or os.environ.get("CP_NAMESPACE") or None
        elif namespace:
            raise TypeError("AdminClient names the namespace in each call; it takes no namespace=")
        transport = self._transport_class(
            base_url, token, namespace=namespace, timeout=timeout, retry=retry, scoped=self._scoped
        )
        super().__init__(transport)


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
        """The caller as the server resolved it (awaitable on AsyncClient)."""
        return self._transport.call(IDENTITY, "WhoAmI", identity_pb2.WhoAmIRequest())


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
        return self._transport.resolve_namespace()


class AsyncClient(_Connected, _AsyncLifecycle, _Scoped):
    """Client for asyncio: the same methods, awaited; `list()` gives an async iterator."""

    _transport_class = AsyncTransport
    _scoped = True

    async def namespace(self) -> str:
        return await self._transport.resolve_namespace()


class AdminClient(_Connected, _SyncLifecycle, AdminMethods):
    """The separate raw client for NamespaceService (admin callers only), kept apart from `Client`."""

    _transport_class = SyncTransport
    _scoped = False


class AsyncAdminClient(_Connected, _AsyncLifecycle, AdminMethods):
    """AdminClient for asyncio."""

    _transport_class = AsyncTransport
    _scoped = False
