"""Model → protobuf message conversion for namespaces."""

from google.protobuf.timestamp_pb2 import Timestamp

from containers.api.v1 import namespace_pb2 as pb

from .models import QUOTA_FIELDS, Namespace


def timestamp(value) -> Timestamp | None:
    if value is None:
        return None
    ts = Timestamp()
    ts.FromDatetime(value)
    return ts


def namespace_to_proto(namespace: Namespace) -> pb.Namespace:
    quotas = pb.Quotas(**{f: getattr(namespace, f) for f in QUOTA_FIELDS if getattr(namespace, f) is not None})
    return pb.Namespace(
        namespace=namespace.name,
        groups=[pb.GroupBinding(oidc_group=b.oidc_group, role=b.role) for b in namespace.group_bindings.all()],
        internal_targets=[
            pb.InternalTarget(name=t.name, host=t.host, ports=t.ports) for t in namespace.internal_targets.all()
        ],
        image_pull_secrets=[
            pb.ImagePullSecret(registry=s.registry, secret_ref=s.secret_ref) for s in namespace.image_pull_secrets.all()
        ],
        quotas=quotas,
        create_time=timestamp(namespace.created_at),
        update_time=timestamp(namespace.updated_at),
    )
