"""Egress grants and events.

A target is either a host or the name of an internal target, told apart by shape:
- a host name has at least one dot (api.example.com), or is an IP address (10.0.0.5,
  [2001:db8::1]); either may carry a port (api.example.com:443, [2001:db8::1]:443);
- a bare DNS label without a dot (db) names an internal target registered for the
  namespace (UpdateNamespace / RegisterInternalTarget); its ports come with the target.
So "localhost" is an internal target name, never the sandbox's own loopback.
"""

from __future__ import annotations

import ipaddress
import re

from django.db import transaction

from audit.services import record
from controlplane.auth import Principal
from controlplane.errors import Error
from namespaces import egress_rules
from namespaces.models import DNS_LABEL, InternalTarget

from .. import selectors
from ..ids import new_id
from ..models import EgressEvent, EgressGrant, Sandbox
from .common import enforce_quota, idempotent_create, lock_namespace

_LABEL_RE = re.compile(DNS_LABEL)
_HOST_RE = re.compile(r"(?=.{1,253}\Z)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+")
_HOST_PORT_RE = re.compile(r"(?P<host>\[[0-9a-f:.]+\]|[^:\[\]]+)(?::(?P<port>[0-9]{1,5}))?")


def parse_target(text: str, field: str = "target") -> tuple[str, str]:
    """(kind, normalised target) or invalid_argument naming the field."""
    target = (text or "").strip().lower()
    if not target:
        raise Error.invalid_argument(field, "is required")
    match = _HOST_PORT_RE.fullmatch(target)
    if match is None:
        raise Error.invalid_argument(field, "must be host[:port] or the name of an internal target")
    host, port = match["host"], match["port"]
    if port is not None and not 1 <= int(port) <= 65535:
        raise Error.invalid_argument(field, f"port must be between 1 and 65535, got {port}")
    if _is_ip(host.strip("[]")):
        if ":" in host and not host.startswith("["):
            raise Error.invalid_argument(field, "write IPv6 addresses in brackets, e.g. [2001:db8::1]:443")
        return EgressGrant.Kind.HOST, target
    if "." in host:
        if not _HOST_RE.fullmatch(host):
            raise Error.invalid_argument(field, f"{host!r} is not a valid host name")
        return EgressGrant.Kind.HOST, target
    if not _LABEL_RE.fullmatch(host) or len(host) > 63:
        raise Error.invalid_argument(field, f"{host!r} is neither a host name with a dot nor an internal target name")
    if port is not None:
        raise Error.invalid_argument(field, "internal targets are named without a port; their ports are registered")
    return EgressGrant.Kind.INTERNAL, target


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


@transaction.atomic
@idempotent_create("GrantEgress", EgressGrant)
def grant_egress(*, actor: Principal, namespace: str, target: str) -> EgressGrant:
    kind, target = parse_target(target)
    if kind == EgressGrant.Kind.HOST:
        egress_rules.check_host(_HOST_PORT_RE.fullmatch(target)["host"])
    ns = lock_namespace(namespace)
    if kind == EgressGrant.Kind.INTERNAL:
        internal = InternalTarget.objects.filter(namespace=ns, name=target).first()
        if internal is None:
            raise Error.failed_precondition(
                f"no internal target named {target!r} is registered for namespace {ns.name!r}"
            )
        # Registered before a rule was added, or by hand: the host behind the name counts.
        egress_rules.check_host(internal.host)
    if EgressGrant.objects.filter(namespace=ns, target=target).exists():
        raise Error.already_exists(f"egress to {target!r} is already granted in namespace {ns.name!r}")
    enforce_quota(ns, "max_egress_grants", EgressGrant.objects.filter(namespace=ns))
    grant = EgressGrant.objects.create(
        grant_id=new_id("egr"), namespace=ns, target=target, kind=kind, created_by=actor.describe()
    )
    EgressEvent.objects.create(
        namespace=ns, kind=EgressEvent.Kind.GRANTED, target=target, grant_id=grant.grant_id, actor=actor.describe()
    )
    record(
        actor=actor,
        action="egress.grant",
        target=f"egress_grant:{grant.grant_id}",
        namespace=ns.name,
        changes={"target": target, "kind": kind},
    )
    return grant


@transaction.atomic
def revoke_egress(*, actor: Principal, grant_id: str) -> None:
    grant = selectors.get(EgressGrant, grant_id, for_update=True)
    EgressEvent.objects.create(
        namespace=grant.namespace,
        kind=EgressEvent.Kind.REVOKED,
        target=grant.target,
        grant_id=grant_id,
        actor=actor.describe(),
    )
    record(
        actor=actor,
        action="egress.revoke",
        target=f"egress_grant:{grant_id}",
        namespace=grant.namespace.name,
        changes={"target": grant.target},
    )
    grant.delete()


def report_egress_event(*, actor: Principal, sandbox_id: str, target: str, allowed: bool) -> EgressEvent:
    """A connection seen by a sandbox's agent. Recorded as reported; not an audit-log change."""
    if not sandbox_id:
        raise Error.invalid_argument("sandboxId", "is required")
    _, target = parse_target(target)
    sandbox = Sandbox.objects.select_related("namespace").filter(sandbox_id=sandbox_id).first()
    if sandbox is None:
        raise Error.not_found(f"sandbox {sandbox_id!r} not found")
    return EgressEvent.objects.create(
        namespace=sandbox.namespace,
        kind=EgressEvent.Kind.CONNECTION,
        target=target,
        sandbox_id=sandbox_id,
        allowed=allowed,
        actor=actor.describe(),
    )
