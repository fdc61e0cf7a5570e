"""Namespace record → protobuf message conversion, and → the message's proto3 JSON object
directly (for the hot reads, served through controlplane.rpc.codecs.prepared)."""

from datetime import UTC, datetime

from google.protobuf.timestamp_pb2 import Timestamp

from containers.api.v1 import namespace_pb2 as pb
from controlplane import protojson

from .selectors import NamespaceRecord

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def timestamp(value: datetime | None) -> Timestamp | None:
    """As Timestamp.FromDatetime (naive means UTC), at a quarter of its cost: every row of
    every list has two."""
    if value is None:
        return None
    since = (value if value.tzinfo is not None else value.replace(tzinfo=UTC)) - _EPOCH
    return Timestamp(seconds=since.days * 86400 + since.seconds, nanos=since.microseconds * 1000)


def namespace_to_proto(namespace: NamespaceRecord) -> pb.Namespace:
    return pb.Namespace(
        namespace=namespace.name,
        groups=[pb.GroupBinding(oidc_group=group, role=role) for group, role in namespace.groups],
        internal_targets=[
            pb.InternalTarget(name=name, host=host, ports=ports) for name, host, ports in namespace.internal_targets
        ],
        image_pull_secrets=[
            pb.ImagePullSecret(registry=registry, secret_ref=ref) for registry, ref in namespace.image_pull_secrets
        ],
        quotas=pb.Quotas(**namespace.quotas),
        create_time=timestamp(namespace.created_at),
        update_time=timestamp(namespace.updated_at),
    )


_ROLES = protojson.enum_names(pb.Role.DESCRIPTOR)
_QUOTAS = {field.name: field.json_name for field in pb.Quotas.DESCRIPTOR.fields}


def namespace_to_json(namespace: NamespaceRecord) -> dict:
    """json_format.MessageToDict(namespace_to_proto(namespace)), without building the message
    (a tenth of the time): defaults left out, enums by name, RFC 3339 timestamps.
    tests/namespaces/test_converters.py proves the two equal over random records."""
    out: dict = {}
    if namespace.name:
        out["namespace"] = namespace.name
    if namespace.groups:
        out["groups"] = [_binding(group, role) for group, role in namespace.groups]
    if namespace.internal_targets:
        out["internalTargets"] = [_target(name, host, ports) for name, host, ports in namespace.internal_targets]
    if namespace.image_pull_secrets:
        out["imagePullSecrets"] = [_pull_secret(registry, ref) for registry, ref in namespace.image_pull_secrets]
    out["quotas"] = {_QUOTAS[name]: value for name, value in namespace.quotas.items()}  # optional: 0 is set
    if namespace.created_at is not None:
        out["createTime"] = protojson.timestamp(namespace.created_at)
    if namespace.updated_at is not None:
        out["updateTime"] = protojson.timestamp(namespace.updated_at)
    return out


def _binding(group: str, role: int) -> dict:
    out = {"oidcGroup": group} if group else {}
    if role:
        out["role"] = _ROLES[role]
    return out


def _target(name: str, host: str, ports: list[int]) -> dict:
    out = {"name": name} if name else {}
    if host:
        out["host"] = host
    if ports:
        out["ports"] = list(ports)
    return out


def _pull_secret(registry: str, ref: str) -> dict:
    out = {"registry": registry} if registry else {}
    if ref:
        out["secretRef"] = ref
    return out
