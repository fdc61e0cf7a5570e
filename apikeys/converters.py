"""Model → protobuf message conversion for API keys."""

from containers.api.v1 import namespace_pb2 as pb
from namespaces.converters import timestamp

from .models import ApiKey

_KINDS = {ApiKey.Kind.STANDARD: pb.API_KEY_KIND_STANDARD, ApiKey.Kind.AGENT: pb.API_KEY_KIND_AGENT}
_STATES = {"active": pb.API_KEY_STATE_ACTIVE, "revoked": pb.API_KEY_STATE_REVOKED, "expired": pb.API_KEY_STATE_EXPIRED}


def api_key_to_proto(key: ApiKey) -> pb.ApiKey:
    return pb.ApiKey(
        key_id=key.key_id,
        name=key.name,
        namespace=key.namespace.name,
        role=key.role or pb.ROLE_UNSPECIFIED,
        created=timestamp(key.created_at),
        last_used=timestamp(key.last_used_at),
        expires_at=timestamp(key.expires_at),
        revoked_at=timestamp(key.revoked_at),
        created_by=key.created_by,
        kind=_KINDS[key.kind],
        state=_STATES[key.state()],
        hint=key.hint,
        workspace_scope=key.workspace_scope,
    )
