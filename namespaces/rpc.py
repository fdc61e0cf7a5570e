"""containers.api.v1.NamespaceService: thin views over the namespace and API key services."""

from __future__ import annotations

from datetime import UTC

from connectrpc.request import RequestContext

from apikeys import selectors as key_selectors
from apikeys import services as key_services
from apikeys.converters import api_key_to_proto
from containers.api.v1 import namespace_pb2 as pb
from containers.api.v1.namespace_connect import NamespaceServiceSync, NamespaceServiceWSGIApplication
from controlplane.errors import Error
from controlplane.rpc import AdminOnly, Service, pagination, present_fields, principal_of, rpc
from controlplane.rpc.codecs import prepared, prepared_page

from . import selectors, services
from .converters import namespace_to_json, namespace_to_proto
from .validation import validate_namespace_name

ADMIN = AdminOnly()
_JSON_NAMES = {
    "groups": "groups",
    "internal_targets": "internalTargets",
    "image_pull_secrets": "imagePullSecrets",
    "quotas": "quotas",
}


class NamespaceService(Service, NamespaceServiceSync):
    descriptor = pb.DESCRIPTOR.services_by_name["NamespaceService"]
    application = NamespaceServiceWSGIApplication

    @rpc(permission=ADMIN)
    def create_namespace(self, request, ctx):
        namespace = services.create_namespace(
            actor=principal_of(ctx),
            name=request.namespace,
            groups=_bindings(request.groups),
            internal_targets=_targets(request.internal_targets),
            image_pull_secrets=_pull_secrets(request.image_pull_secrets),
            quotas=_quotas(request.quotas),
        )
        return namespace_to_proto(selectors.get_namespace(namespace.name))

    @rpc(permission=ADMIN)
    def get_namespace(self, request, ctx):
        validate_namespace_name(request.namespace)
        namespace = selectors.get_namespace(request.namespace)
        return prepared(pb.Namespace, namespace_to_json(namespace), lambda: namespace_to_proto(namespace))

    @rpc(permission=ADMIN)
    def list_namespaces(self, request, ctx):
        page, token = pagination.keyset_page(
            request,
            salt="namespaces.list",
            fetch=lambda after, limit: selectors.list_namespaces(after=after or "", limit=limit),
            position_of=lambda namespace: namespace.name,
        )
        return prepared_page(
            pb.ListNamespacesResponse, "namespaces", page, token, namespace_to_json, namespace_to_proto
        )

    @rpc(permission=ADMIN)
    def update_namespace(self, request, ctx):
        fields = _update_fields(request, ctx)
        changes = {}
        if "groups" in fields:
            changes["groups"] = _bindings(request.groups)
        if "internal_targets" in fields:
            changes["internal_targets"] = _targets(request.internal_targets)
        if "image_pull_secrets" in fields:
            changes["image_pull_secrets"] = _pull_secrets(request.image_pull_secrets)
        if "quotas" in fields:
            changes["quotas"] = _quotas(request.quotas)
        namespace = services.update_namespace(actor=principal_of(ctx), name=request.namespace, **changes)
        return namespace_to_proto(selectors.get_namespace(namespace.name))

    @rpc(permission=ADMIN)
    def register_internal_target(self, request, ctx):
        target = services.Target(request.target.name, request.target.host, tuple(request.target.ports))
        namespace = services.register_internal_target(
            actor=principal_of(ctx), namespace=request.namespace, target=target
        )
        return namespace_to_proto(selectors.get_namespace(namespace.name))

    @rpc(permission=ADMIN)
    def issue_api_key(self, request, ctx):
        key, plaintext = key_services.issue_api_key(
            actor=principal_of(ctx),
            namespace=request.namespace,
            name=request.name,
            role=request.role,
            expires_at=request.expires_at.ToDatetime(tzinfo=UTC) if request.HasField("expires_at") else None,
            request_id=request.request_id,
        )
        return pb.IssueApiKeyResponse(key=api_key_to_proto(key), plaintext=plaintext)

    @rpc(permission=ADMIN)
    def list_api_keys(self, request, ctx):
        page, token = pagination.keyset_page(
            request,
            salt="apikeys.list",
            binding=request.namespace,
            fetch=lambda after, limit: key_selectors.list_api_keys(
                namespace=request.namespace, after=tuple(after) if after else None, limit=limit
            ),
            position_of=lambda key: [key.created_at.isoformat(), key.pk],
        )
        return pb.ListApiKeysResponse(keys=[api_key_to_proto(k) for k in page], next_page_token=token)

    @rpc(permission=ADMIN)
    def revoke_api_key(self, request, ctx):
        key_services.revoke_api_key(actor=principal_of(ctx), key_id=request.key_id)
        return pb.RevokeApiKeyResponse()


def _update_fields(request: pb.UpdateNamespaceRequest, ctx: RequestContext) -> set[str]:
    """Which parts to replace: the update mask, else what the caller sent (see the proto)."""
    if request.HasField("update_mask"):
        fields = set()
        for path in request.update_mask.paths:
            name = next((f for f, json_name in _JSON_NAMES.items() if path in (f, json_name)), None)
            if name is None:
                raise Error.invalid_argument("updateMask", f"unknown field {path!r}")
            fields.add(name)
        return fields
    present = present_fields(ctx)
    if present is not None:
        return {f for f, json_name in _JSON_NAMES.items() if {f, json_name} & present}
    present = {f for f in ("groups", "internal_targets", "image_pull_secrets") if len(getattr(request, f))}
    if request.HasField("quotas"):
        present.add("quotas")
    return present


def _bindings(groups):
    return [services.Binding(g.oidc_group, g.role) for g in groups]


def _targets(targets):
    return [services.Target(t.name, t.host, tuple(t.ports)) for t in targets]


def _pull_secrets(secrets):
    return [services.PullSecret(s.registry, s.secret_ref) for s in secrets]


def _quotas(quotas: pb.Quotas) -> dict[str, int | None]:
    return {
        field.name: (getattr(quotas, field.name) if quotas.HasField(field.name) else None)
        for field in quotas.DESCRIPTOR.fields
    }
