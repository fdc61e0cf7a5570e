"""One RPC call: credential, timeout (Connect-Timeout-Ms), namespace, retries, typed errors.

`SyncTransport.call` returns the result and `AsyncTransport.call` an awaitable of it, so the
resource classes (resources.py, admin.py) are written once for both clients.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import importlib
import random
import re
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass

from connectrpc.code import Code
from connectrpc.errors import ConnectError
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import FieldDescriptor, MethodDescriptor, ServiceDescriptor
from google.protobuf.message import Message

from . import errors
from ._gen.containers.api.v1 import identity_pb2

_SAFE = (
    descriptor_pb2.MethodOptions.NO_SIDE_EFFECTS,
    descriptor_pb2.MethodOptions.IDEMPOTENT,
)
IDENTITY = identity_pb2.DESCRIPTOR.services_by_name["IdentityService"]


@dataclass(frozen=True)
class RetryPolicy:
    """Retries `unavailable` with exponential backoff and full jitter, on safe calls only."""

    attempts: int = 4  # the first try included
    initial_backoff: float = 0.1
    max_backoff: float = 2.0

    def delays(self) -> list[float]:
        return [random.uniform(0, min(self.max_backoff, self.initial_backoff * 2**n)) for n in range(self.attempts - 1)]  # noqa: S311 - jitter, not a secret


NO_RETRIES = RetryPolicy(attempts=1)


def prepare(method: MethodDescriptor, request: Message) -> bool:
    """Fills an empty AIP-155 `request_id` with a fresh UUID; returns whether a retry is safe.

    Safe: the method declares no side effects (or idempotency), is a standard Get/List
    method (AIP-131/132), or carries a request id the server deduplicates on.
    """
    field = request.DESCRIPTOR.fields_by_name.get("request_id")
    if field is not None and field.type == FieldDescriptor.TYPE_STRING and not field.is_repeated:
        if not request.request_id:
            request.request_id = str(uuid.uuid4())
        return True
    if method.GetOptions().idempotency_level in _SAFE:
        return True
    return method.name.startswith(("Get", "List"))


def _snake(name: str) -> str:
    """The generated client's method name: WhoAmI → who_am_i, GetPreviewUrl → get_preview_url."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _missing_namespace(request: Message) -> Message | None:
    """The message whose `namespace` the client must fill: the request itself, or a set
    reference inside it that names a resource (a `name`) but no namespace (BucketRef)."""
    fields = request.DESCRIPTOR.fields_by_name
    if "namespace" in fields:
        return request if not request.namespace else None
    for field in request.DESCRIPTOR.fields:
        if field.message_type is not None and not field.is_repeated and request.HasField(field.name):
            inner = getattr(request, field.name)
            names = inner.DESCRIPTOR.fields_by_name
            if "namespace" in names and "name" in names and inner.name and not inner.namespace:
                return inner
    return None


def choose_namespace(me: identity_pb2.WhoAmIResponse) -> str:
    names = [entry.namespace for entry in me.namespaces]
    if len(names) == 1:
        return names[0]
    held = ", ".join(names) or "none"
    raise errors.ConfigurationError(
        f"cannot tell which namespace to act in: the credential holds a role in {held}; "
        "pass namespace= (or --namespace / CP_NAMESPACE)"
    )


def _learned(me: identity_pb2.WhoAmIResponse) -> str | None:
    return me.namespaces[0].namespace if len(me.namespaces) == 1 else None


def _unwrap(response: Message, unwrap):
    """The part of the response the caller wants: a field name, a function of it, or all."""
    if unwrap is None:
        return response
    return unwrap(response) if callable(unwrap) else getattr(response, unwrap)


class _Transport:
    client_suffix: str

    def __init__(
        self, base_url: str, token: str | None, *, namespace: str | None, timeout: float | None, retry, scoped: bool
    ):
        self.scoped = scoped  # fill in the namespace (Client); AdminClient names it in every call
        self.base_url = base_url.rstrip("/")
        self.headers = {"authorization": f"Bearer {token}"} if token else {}
        self.timeout_ms = max(1, int(timeout * 1000)) if timeout else None
        self.retry = retry
        self.namespace = namespace
        self._clients: dict[str, object] = {}

    def stub(self, service: ServiceDescriptor, method_name: str, *, streaming: bool = False):
        """The generated client's bound method for service/method (one client per service).

        streaming: a client without the per-call timeout, since a stream lasts as long as the
        server lets it (STREAM_MAX_SECONDS) and then ends cleanly."""
        key = (service.full_name, streaming)
        client = self._clients.get(key)
        if client is None:
            module = importlib.import_module(
                f"{__package__}._gen." + service.file.name[:-6].replace("/", ".") + "_connect"
            )
            cls = getattr(module, f"{service.name}Client{self.client_suffix}")
            timeout_ms = None if streaming else self.timeout_ms
            client = self._clients[key] = cls(self.base_url, timeout_ms=timeout_ms)
        return getattr(client, _snake(method_name))

    def _attempts(self, service, method_name, request):
        method = service.methods_by_name[method_name]
        retryable = prepare(method, request)
        stub = self.stub(service, method_name)
        delays = self.retry.delays() if retryable else []
        return stub, delays

    def _give_up(self, exc: ConnectError, delays: list[float]) -> float:
        """The delay before the next attempt, or raises the typed error."""
        if exc.code is Code.UNAVAILABLE and delays:
            return delays.pop(0)
        raise errors.from_connect(exc) from None


@dataclass
class Resume:
    """How a server stream is continued after it ends or breaks (Transport.stream).

    advance(request, message): moves the request past `message` (its resume token, its
    offset); finished(message): no more will come; keep(message): hand it to the caller;
    unwrap: what of it (as for `call`)."""

    advance: Callable[[Message, Message], None]
    finished: Callable[[Message], bool] = lambda message: False
    keep: Callable[[Message], bool] = lambda message: True
    unwrap: object = None


class SyncTransport(_Transport):
    client_suffix = "Sync"

    def whoami(self) -> identity_pb2.WhoAmIResponse:
        me = self.call(IDENTITY, "WhoAmI", identity_pb2.WhoAmIRequest())
        if self.namespace is None and self.scoped:
            self.namespace = _learned(me)
        return me

    def resolve_namespace(self) -> str:
        if self.namespace is None:
            self.namespace = choose_namespace(self.whoami())
        return self.namespace

    def call(self, service: ServiceDescriptor, method_name: str, request: Message, unwrap=None):
        target = _missing_namespace(request) if self.scoped else None
        if target is not None:
            target.namespace = self.resolve_namespace()
        stub, delays = self._attempts(service, method_name, request)
        while True:
            try:
                response = stub(request, headers=self.headers, timeout_ms=self.timeout_ms)
                break
            except ConnectError as exc:
                time.sleep(self._give_up(exc, delays))
        return _unwrap(response, unwrap)

    def pages(
        self,
        service,
        method_name,
        request,
        items: str,
        page_field: str = "page_token",
        next_field: str = "next_page_token",
    ) -> Iterator:
        """Every item of every page, following the page token (or cursor) until it is empty."""
        while True:
            page = self.call(service, method_name, request)
            yield from getattr(page, items)
            if not getattr(page, next_field):
                return
            setattr(request, page_field, getattr(page, next_field))

    def stream(self, service, method_name: str, request: Message, resume: Resume) -> Iterator:
        """A server stream's messages, resumed from where it stopped when it ends cleanly (the
        server's lifetime) or fails `unavailable` (with backoff; other errors raise)."""
        target = _missing_namespace(request) if self.scoped else None
        if target is not None:
            target.namespace = self.resolve_namespace()
        stub = self.stub(service, method_name, streaming=True)
        delays = self.retry.delays()
        while True:
            try:
                with contextlib.closing(stub(request, headers=self.headers)) as messages:
                    for message in messages:
                        delays = self.retry.delays()  # it works again: a fresh budget
                        resume.advance(request, message)
                        if resume.keep(message):
                            yield _unwrap(message, resume.unwrap)
                        if resume.finished(message):
                            return
            except ConnectError as exc:
                time.sleep(self._give_up(exc, delays))

    def close(self) -> None:
        for client in self._clients.values():
            client.close()


@functools.cache
def _settle_before_exit() -> None:
    """Registers, once, a short pause before the interpreter finalizes.

    pyqwest's (0.12) runtime threads may still call into Python after asyncio.run() returns;
    if the interpreter is finalizing by then, the process aborts (SIGABRT, about 1 run in 5
    of a script that made one async call). 50 ms before finalization: 0 aborts in 30 runs.
    """
    atexit.register(time.sleep, 0.05)


class AsyncTransport(_Transport):
    client_suffix = ""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _settle_before_exit()

    async def whoami(self) -> identity_pb2.WhoAmIResponse:
        me = await self.call(IDENTITY, "WhoAmI", identity_pb2.WhoAmIRequest())
        if self.namespace is None and self.scoped:
            self.namespace = _learned(me)
        return me

    async def resolve_namespace(self) -> str:
        if self.namespace is None:
            self.namespace = choose_namespace(await self.whoami())
        return self.namespace

    async def call(self, service: ServiceDescriptor, method_name: str, request: Message, unwrap=None):
        target = _missing_namespace(request) if self.scoped else None
        if target is not None:
            target.namespace = await self.resolve_namespace()
        stub, delays = self._attempts(service, method_name, request)
        while True:
            try:
                response = await stub(request, headers=self.headers, timeout_ms=self.timeout_ms)
                break
            except ConnectError as exc:
                await asyncio.sleep(self._give_up(exc, delays))
        return _unwrap(response, unwrap)

    async def pages(
        self,
        service,
        method_name,
        request,
        items: str,
        page_field: str = "page_token",
        next_field: str = "next_page_token",
    ) -> AsyncIterator:
        while True:
            page = await self.call(service, method_name, request)
            for item in getattr(page, items):
                yield item
            if not getattr(page, next_field):
                return
            setattr(request, page_field, getattr(page, next_field))

    async def stream(self, service, method_name: str, request: Message, resume: Resume) -> AsyncIterator:
        """SyncTransport.stream for asyncio."""
        target = _missing_namespace(request) if self.scoped else None
        if target is not None:
            target.namespace = await self.resolve_namespace()
        stub = self.stub(service, method_name, streaming=True)
        delays = self.retry.delays()
        while True:
            messages = stub(request, headers=self.headers)
            try:
                async for message in messages:
                    delays = self.retry.delays()
                    resume.advance(request, message)
                    if resume.keep(message):
                        yield _unwrap(message, resume.unwrap)
                    if resume.finished(message):
                        return
            except ConnectError as exc:
                await asyncio.sleep(self._give_up(exc, delays))
            finally:
                await messages.aclose()

    async def close(self) -> None:
        for client in self._clients.values():
            await client.close()
