"""kmock's KubernetesEmulator on a loopback port in a thread, for the official client to talk to.

kmock 0.8 stores objects and serves create (409 on a duplicate), get, list, watch, merge-patch
and delete over real HTTP. What it leaves out, and this subclass adds because the engine relies
on it (as a real API server does):
- label and field selectors (`labelSelector=a=b,c=d`, `fieldSelector=metadata.name=x`) on list
  and watch: kmock returns every object of the resource;
- a watch that sees every change after it starts (kmock's lists first, then subscribes: a change
  in between is lost) and ends after timeoutSeconds (kmock's never ends). It does not replay
  changes from a resourceVersion, as a real API server does;
- metadata.namespace (from the URL), uid, creationTimestamp and resourceVersion on create:
  without the namespace, kmock's namespaced watch silently drops every later event;
- `pods/NAME/log?follow=true`: kmock answers a subresource with the object itself. Here it
  streams what the test wrote with write_log() until the test ends the container;
- /version/ as the client asks for it;
- a record of every call (verb, resource), to compare with the runner's Role.
It has no controllers: the tests play the job controller and the kubelet (Kubelet below).
"""

from __future__ import annotations

import asyncio
import datetime
import threading
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import kmock
from kmock._internal import apps
from kubernetes import client

VERBS = {"list": "list", "watch": "watch", "fetch": "get", "create": "create", "update": "patch", "delete": "delete"}


def _matches(obj: dict, params) -> bool:
    meta = obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    for term in filter(None, params.get("labelSelector", "").split(",")):
        key, _, value = term.partition("=")
        if labels.get(key) != value:
            return False
    for term in filter(None, params.get("fieldSelector", "").split(",")):
        key, _, value = term.partition("=")
        if key != "metadata.name":
            raise AssertionError(f"the emulator supports fieldSelector=metadata.name only, not {term}")
        if meta.get("name") != value:
            return False
    return True


@dataclass(frozen=True)
class Call:
    resource: str  # "jobs", "pods/log", …
    verb: str  # as in RBAC: get, list, watch, create, patch, delete
    namespace: str | None
    name: str | None
    params: dict
    body: object
    agent: str  # the User-Agent: tells the engine's calls from the test's own


class Emulator(kmock.KubernetesEmulator):
    def setup(self) -> None:
        self.calls: list[Call] = []  # in order
        self.logs: dict[str, bytearray] = {}  # pod name → its output so far
        for resource in ("batch/v1/jobs", "v1/pods", "v1/secrets", "v1/services"):
            self.resources[resource] = {}  # listing them answers [] rather than 404 before any exists
        # The client asks for /version/ (trailing slash); kmock serves /version only.
        version = dict.fromkeys(["buildDate", "compiler", "gitCommit", "gitTreeState", "goVersion", "platform"], "")
        self["get /version/"] << {**version, "gitVersion": f"kmock-{kmock.__version__}", "major": "1", "minor": "0"}

    async def _handle(self, request):
        if request.resource is not None and request.action is not None:
            resource = request.resource.plural + (f"/{request.subresource}" if request.subresource else "")
            verb = VERBS[request.action.value.lower()]
            agent = request.headers.get("User-Agent", "")
            call = Call(resource, verb, request.namespace, request.name, dict(request.params), request.data, agent)
            self.calls.append(call)
            if request.action.value.lower() == "create" and isinstance(request.data, dict):
                meta = request.data.setdefault("metadata", {})
                meta.setdefault("namespace", request.namespace)  # else kmock's watch drops its events
                meta.setdefault("uid", str(uuid.uuid4()))
                meta.setdefault("creationTimestamp", datetime.datetime.now(datetime.UTC).isoformat())
                meta["resourceVersion"] = "1"
        return await super()._handle(request)

    async def _serve_list(self, request):
        answer = await super()._serve_list(request)
        answer["items"] = [item for item in answer["items"] if _matches(item, request.params)]
        return answer

    async def _serve_watch(self, request) -> AsyncIterator:
        # kmock's own watch lists the objects and only then subscribes to changes: a change in
        # between is lost. Here the subscription comes first (a change may then show twice).
        loop = asyncio.get_running_loop()
        deadline = loop.time() + float(request.params.get("timeoutSeconds") or 3600)
        yield b""  # the headers go out at once
        bus = self._buses[request.resource]
        marker = await bus.mark()
        try:
            current = [
                obj.raw
                for (resource, namespace, _), obj in list(self.objects.items())
                if resource == request.resource and namespace == request.namespace and not obj.deleted
            ]
            for raw in current:
                if _matches(raw, request.params):
                    yield {"type": "ADDED", "object": raw}
            events = bus.stream(since=marker)
            while True:
                try:  # kmock ignores timeoutSeconds; a real API server ends the watch then
                    event = await asyncio.wait_for(anext(events), max(0.0, deadline - loop.time()))
                except (StopAsyncIteration, TimeoutError):
                    return
                obj = event.get("object") or {}
                if (obj.get("metadata") or {}).get("namespace") == request.namespace and _matches(obj, request.params):
                    yield event
        finally:
            await bus.unmark(marker)

    async def _serve_fetch(self, request):
        if request.subresource == "log":
            if request.params.get("follow") != "true":
                return bytes(self.logs.get(request.name, b""))
            return self._follow_log(request.namespace, request.name)
        return await super()._serve_fetch(request)

    async def _follow_log(self, namespace: str, name: str) -> AsyncIterator[bytes]:
        yield b""  # the headers go out at once, as with a real follow
        sent = 0
        while True:
            log = self.logs.get(name, b"")
            if len(log) > sent:
                yield bytes(log[sent:])
                sent = len(log)
            pod = self._pod(namespace, name)
            if (pod is None or _terminated(pod)) and len(self.logs.get(name, b"")) == sent:
                return
            await asyncio.sleep(0.02)

    def _pod(self, namespace: str, name: str) -> dict | None:
        for (resource, ns, obj_name), obj in self.objects.items():
            if resource.plural == "pods" and ns == namespace and obj_name == name and not obj.deleted:
                return obj.raw
        return None


def _terminated(pod: dict) -> bool:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return any("terminated" in (status.get("state") or {}) for status in statuses)


class EmulatorThread:
    """with EmulatorThread() as emulator: emulator.api is an ApiClient pointed at it over HTTP."""

    def __init__(self):
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=lambda: asyncio.run(self._serve()), name="kmock", daemon=True)

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        async with Emulator() as emulator, apps.Server(emulator) as server:
            emulator.setup()
            self.emulator = emulator
            self.url = str(server.url).rstrip("/")
            self._ready.set()
            await self._stop.wait()

    def client(self, user_agent: str = "test") -> client.ApiClient:
        configuration = client.Configuration()
        configuration.host = self.url
        api = client.ApiClient(configuration)
        api.user_agent = user_agent
        return api

    def __enter__(self) -> EmulatorThread:
        self._thread.start()
        if not self._ready.wait(30):
            raise AssertionError("kmock's emulator did not start")
        self.api = self.client()
        return self

    def __exit__(self, *exc) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)
