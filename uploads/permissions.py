"""Who may list uploads: the scope upl:bucket:read, held by VIEWER or above
in the bucket's namespace; admins everywhere."""

from __future__ import annotations

from controlplane.auth import Kind, Role
from controlplane.errors import Error
from controlplane.rpc import Permission

from . import selectors

SCOPE = "upl:bucket:read"


def has_bucket_reference(request) -> bool:
    ref = request.bucket
    return bool(ref.bucket_id or ref.namespace or ref.name)


class CanReadUploads(Permission):
    def check(self, principal, request):
        if principal.kind is Kind.AGENT:
            raise Error.permission_denied("sandbox agent keys may not list uploads")
        # OIDC access tokens are limited to what they were granted; keys and sessions hold roles only.
        if principal.via == "bearer" and principal.kind is Kind.USER and SCOPE not in principal.scopes:
            raise Error.permission_denied(f"the token lacks the scope {SCOPE}")
        if not has_bucket_reference(request):
            if not principal.admin and not selectors.readable_namespaces(principal):
                raise Error.permission_denied("caller has no namespace to read uploads in")
            return
        ref = request.bucket
        if not ref.bucket_id:
            validate_ref(ref)
            # By name: the namespace is known before any lookup, so no existence is revealed.
            _require_viewer(principal, ref.namespace, f"namespace {ref.namespace!r}")
        bucket = bucket_of(request)
        # By id the namespace is the owner's: not named to a caller who may not read it.
        _require_viewer(principal, bucket.namespace, "this bucket's namespace")


def bucket_of(request) -> selectors.BucketScope:
    """The request's bucket, looked up once per call (this check and the listing share it)."""
    validate_ref(request.bucket)
    ref = request.bucket
    keys = [f.key for f in request.metadata_filters]
    return selectors.bucket_scope(bucket_id=ref.bucket_id, namespace=ref.namespace, name=ref.name, keys=keys)


def validate_ref(ref) -> None:
    if ref.bucket_id and (ref.namespace or ref.name):
        raise Error.invalid_argument("bucket", "give bucketId, or namespace and name, not both")
    if not ref.bucket_id:
        for field in ("namespace", "name"):
            if not getattr(ref, field):
                raise Error.invalid_argument(f"bucket.{field}", "is required when bucketId is not given")


def _require_viewer(principal, namespace: str, where: str) -> None:
    if not principal.has_role(namespace, Role.VIEWER):
        raise Error.permission_denied(f"caller may not read buckets of {where}")
