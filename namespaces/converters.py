"""Namespace record → protobuf message conversion."""

from google.protobuf.timestamp_pb2 import Timestamp

from containers.api.v1 import namespace_pb2 as pb

from .selectors import NamespaceRecord


def timestamp(value) -> Timestamp | None:
    if value is None:
        return None
    ts = Timestamp()
    ts.FromDatetime(value)
    return ts


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
