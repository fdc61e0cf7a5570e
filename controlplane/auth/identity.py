"""The one serializer of a principal, shared by GET /auth/me and IdentityService.WhoAmI."""

from __future__ import annotations

from google.protobuf import json_format

from containers.api.v1 import identity_pb2 as pb

from .principal import Kind, Principal


def principal_to_proto(principal: Principal) -> pb.WhoAmIResponse:
    is_key = principal.kind in (Kind.API_KEY, Kind.AGENT, Kind.RUNNER)
    return pb.WhoAmIResponse(
        subject=principal.subject or principal.key_id or "",
        name=principal.display_name,
        kind=principal.kind.value,
        admin=principal.admin,
        namespaces=[pb.NamespaceRole(namespace=name, role=int(role)) for name, role in sorted(principal.roles.items())],
        scopes=sorted(principal.scopes),
        key_id=(principal.key_id or "") if is_key else "",
        workspace_scope=principal.workspace_scope or "",
    )


def principal_to_json(principal: Principal) -> dict:
    """proto3 JSON of `principal_to_proto`, every field present (browsers read it as is)."""
    return json_format.MessageToDict(principal_to_proto(principal), always_print_fields_with_no_presence=True)
