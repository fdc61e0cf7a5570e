"""NamespaceService through its own raw client, apart from `Client`: admin callers only.

`Client` never reaches these operations; an admin builds an `AdminClient` on purpose.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import NamedTuple

from google.protobuf import field_mask_pb2

from ._gen.containers.api.v1 import namespace_pb2 as pb
from ._gen.containers.api.v1 import runner_admin_pb2 as runner_pb
from .resources import _Resource
from .types import Binding, InternalTarget, Role

_UNSET = None


class IssuedKey(NamedTuple):
    """The key record and its plaintext, which is shown this once and never again."""

    key: pb.ApiKey
    plaintext: str


def _bindings(groups: Iterable[Binding]) -> list[pb.GroupBinding]:
    return [pb.GroupBinding(oidc_group=b.oidc_group, role=int(Role.parse(b.role))) for b in groups]


def _targets(targets: Iterable[InternalTarget]) -> list[pb.InternalTarget]:
    return [pb.InternalTarget(name=t.name, host=t.host, ports=list(t.ports)) for t in targets]


def _pull_secrets(secrets: Mapping[str, str]) -> list[pb.ImagePullSecret]:
    return [pb.ImagePullSecret(registry=registry, secret_ref=ref) for registry, ref in secrets.items()]


class IssuedRunnerKey(NamedTuple):
    """The runner record and its key's plaintext, which is shown this once and never again."""

    runner: runner_pb.Runner
    plaintext: str


class RunnerAdminMethods(_Resource):
    """RunnerAdminService: runners and their keys (`admin.runners.issue(...)`)."""

    service = runner_pb.DESCRIPTOR.services_by_name["RunnerAdminService"]

    def issue(self, name: str, *, namespaces: Iterable[str] = ()):
        """Issues a runner key → IssuedRunnerKey(runner, plaintext); `namespaces` limits the work
        it may acquire (none: every namespace)."""
        request = runner_pb.IssueRunnerKeyRequest(name=name, namespaces=list(namespaces))
        return self._call("IssueRunnerKey", request, lambda r: IssuedRunnerKey(r.runner, r.plaintext))

    def list(self, page_size: int = 0):
        """Every runner, newest first, following page tokens; never a plaintext."""
        return self._pages("ListRunners", runner_pb.ListRunnersRequest(page_size=page_size), "runners")

    def revoke(self, runner_id: str):
        """Revokes the runner's key at once and ends its leases."""
        return self._call("RevokeRunner", runner_pb.RevokeRunnerRequest(runner_id=runner_id), "runner")


class AdminMethods(_Resource):
    service = pb.DESCRIPTOR.services_by_name["NamespaceService"]

    def __init__(self, transport):
        super().__init__(transport)
        self.runners = RunnerAdminMethods(transport)

    def create_namespace(
        self,
        name: str,
        *,
        groups: Iterable[Binding] = (),
        internal_targets: Iterable[InternalTarget] = (),
        image_pull_secrets: Mapping[str, str] | None = None,
        quotas: Mapping[str, int] | None = None,
    ):
        """Creates namespace `name`; `image_pull_secrets` maps registry → secret reference."""
        request = pb.CreateNamespaceRequest(
            namespace=name,
            groups=_bindings(groups),
            internal_targets=_targets(internal_targets),
            image_pull_secrets=_pull_secrets(image_pull_secrets or {}),
            quotas=pb.Quotas(**(quotas or {})),
        )
        return self._call("CreateNamespace", request)

    def get_namespace(self, name: str):
        return self._call("GetNamespace", pb.GetNamespaceRequest(namespace=name))

    def list_namespaces(self, page_size: int = 0):
        return self._pages("ListNamespaces", pb.ListNamespacesRequest(page_size=page_size), "namespaces")

    def update_namespace(
        self,
        name: str,
        *,
        groups: Iterable[Binding] | None = _UNSET,
        internal_targets: Iterable[InternalTarget] | None = _UNSET,
        image_pull_secrets: Mapping[str, str] | None = _UNSET,
        quotas: Mapping[str, int | None] | None = _UNSET,
    ):
        """Replaces the parts of namespace `name` that are passed; the others stay as they are.

        Full replace: `groups`, `internal_targets` and `image_pull_secrets` are each the
        complete new list, not additions. To add one binding, read the namespace, append,
        and send the whole list; `groups=[]` removes every binding. `quotas` replaces every
        quota: a missing or None entry means unlimited. Sent with an update mask naming
        exactly the parts passed, so None (the default) never clears anything.
        """
        request = pb.UpdateNamespaceRequest(namespace=name)
        paths = []
        if groups is not None:
            request.groups.extend(_bindings(groups))
            paths.append("groups")
        if internal_targets is not None:
            request.internal_targets.extend(_targets(internal_targets))
            paths.append("internal_targets")
        if image_pull_secrets is not None:
            request.image_pull_secrets.extend(_pull_secrets(image_pull_secrets))
            paths.append("image_pull_secrets")
        if quotas is not None:
            request.quotas.CopyFrom(pb.Quotas(**{k: v for k, v in quotas.items() if v is not None}))
            paths.append("quotas")
        request.update_mask.CopyFrom(field_mask_pb2.FieldMask(paths=paths))
        return self._call("UpdateNamespace", request)

    def register_internal_target(self, namespace: str, target: InternalTarget):
        """Adds (or replaces, by name) one internal egress target of `namespace`."""
        request = pb.RegisterInternalTargetRequest(namespace=namespace, target=_targets([target])[0])
        return self._call("RegisterInternalTarget", request)

    def issue_api_key(self, namespace: str, name: str, role: Role | str, *, expires_at: datetime | None = None):
        """Issues a key for one namespace and one role → IssuedKey(key, plaintext)."""
        request = pb.IssueApiKeyRequest(namespace=namespace, name=name, role=int(Role.parse(role)))
        if expires_at is not None:
            request.expires_at.FromDatetime(expires_at)
        return self._call("IssueApiKey", request, lambda r: IssuedKey(r.key, r.plaintext))

    def list_api_keys(self, namespace: str = "", page_size: int = 0):
        """Keys of `namespace` (all namespaces when empty), newest first; never plaintext."""
        request = pb.ListApiKeysRequest(namespace=namespace, page_size=page_size)
        return self._pages("ListApiKeys", request, "keys")

    def revoke_api_key(self, key_id: str):
        return self._call("RevokeApiKey", pb.RevokeApiKeyRequest(key_id=key_id))
