"""What a namespace write accepts: names, group bindings, internal targets, image pull secrets
and quotas, checked before anything is stored. Each check raises invalid_argument naming the
field as clients send it in JSON (e.g. groups[1].oidcGroup) and the limit it broke."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from controlplane.auth import Role
from controlplane.errors import Error

from . import egress_rules
from .models import DNS_LABEL, QUOTA_FIELDS

MAX_LIST_ITEMS = 1000
MAX_PORTS = 64
MAX_QUOTA = 1_000_000
_DNS_LABEL_RE = re.compile(DNS_LABEL)
_HOSTNAME_RE = re.compile(
    r"(?=.{1,253}\Z)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*"
)
_REGISTRY_RE = re.compile(r"[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?(/[A-Za-z0-9._/-]{1,200})?")
_SECRET_REF_RE = re.compile(r"\S{1,512}")


@dataclass(frozen=True)
class Binding:
    oidc_group: str
    role: Role | int


@dataclass(frozen=True)
class Target:
    name: str
    host: str
    ports: tuple[int, ...] = ()


@dataclass(frozen=True)
class PullSecret:
    registry: str
    secret_ref: str


def validate_namespace_name(name: str, field: str = "namespace") -> str:
    if not name:
        raise Error.invalid_argument(field, "is required")
    if len(name) > 63:
        raise Error.invalid_argument(field, f"must be at most 63 characters, got {len(name)}")
    if not _DNS_LABEL_RE.fullmatch(name):
        raise Error.invalid_argument(field, "must be a DNS label: a-z, 0-9 and '-', starting and ending alphanumeric")
    return name


def validate_role(value: int, field: str = "role") -> Role:
    try:
        return Role(int(value))
    except ValueError:
        raise Error.invalid_argument(field, "must be ROLE_VIEWER, ROLE_OPERATOR or ROLE_ADMIN") from None


def _check_count(items: list, field: str) -> None:
    if len(items) > MAX_LIST_ITEMS:
        raise Error.invalid_argument(field, f"at most {MAX_LIST_ITEMS} items, got {len(items)}")


def validate_bindings(bindings: Iterable[Binding], field: str = "groups") -> list[Binding]:
    bindings = list(bindings)
    _check_count(bindings, field)
    seen: set[str] = set()
    clean = []
    for i, binding in enumerate(bindings):
        group = binding.oidc_group
        if not group or not group.strip():
            raise Error.invalid_argument(f"{field}[{i}].oidcGroup", "is required")
        if len(group) > 256:
            raise Error.invalid_argument(f"{field}[{i}].oidcGroup", f"must be at most 256 characters, got {len(group)}")
        if group in seen:
            raise Error.invalid_argument(f"{field}[{i}].oidcGroup", f"duplicate binding for group {group!r}")
        seen.add(group)
        clean.append(Binding(group, validate_role(binding.role, f"{field}[{i}].role")))
    return clean


def _valid_host(host: str) -> bool:
    if _HOSTNAME_RE.fullmatch(host):
        return True
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def validate_target(target: Target, field: str) -> Target:
    validate_namespace_name(target.name, f"{field}.name")
    if not target.host:
        raise Error.invalid_argument(f"{field}.host", "is required")
    if len(target.host) > 253 or not _valid_host(target.host):  # an IPv6 zone id can make an IP longer
        raise Error.invalid_argument(f"{field}.host", "must be a host name (at most 253 characters) or an IP address")
    # A grant names the target, not the host: a host behind a name must never be one egress can't reach.
    egress_rules.check_host(target.host, f"{field}.host")
    ports = list(target.ports)
    if len(ports) > MAX_PORTS:
        raise Error.invalid_argument(f"{field}.ports", f"at most {MAX_PORTS} ports, got {len(ports)}")
    for j, port in enumerate(ports):
        if not 1 <= port <= 65535:
            raise Error.invalid_argument(f"{field}.ports[{j}]", f"must be between 1 and 65535, got {port}")
    return Target(target.name, target.host, tuple(sorted(set(ports))))


def validate_targets(targets: Iterable[Target], field: str = "internalTargets") -> list[Target]:
    targets = list(targets)
    _check_count(targets, field)
    seen: set[str] = set()
    clean = []
    for i, target in enumerate(targets):
        target = validate_target(target, f"{field}[{i}]")
        if target.name in seen:
            raise Error.invalid_argument(f"{field}[{i}].name", f"duplicate target name {target.name!r}")
        seen.add(target.name)
        clean.append(target)
    return clean


def validate_pull_secrets(secrets: Iterable[PullSecret], field: str = "imagePullSecrets") -> list[PullSecret]:
    secrets = list(secrets)
    _check_count(secrets, field)
    seen: set[str] = set()
    for i, secret in enumerate(secrets):
        if len(secret.registry) > 253 or not _REGISTRY_RE.fullmatch(secret.registry or ""):
            raise Error.invalid_argument(
                f"{field}[{i}].registry", "must be a registry host[:port][/path] of at most 253 characters"
            )
        if not _SECRET_REF_RE.fullmatch(secret.secret_ref or ""):
            raise Error.invalid_argument(
                f"{field}[{i}].secretRef", "must be a reference of 1 to 512 characters without spaces"
            )
        if secret.registry in seen:
            raise Error.invalid_argument(f"{field}[{i}].registry", f"duplicate registry {secret.registry!r}")
        seen.add(secret.registry)
    return secrets


def validate_quotas(quotas: Mapping[str, int | None], field: str = "quotas") -> dict[str, int | None]:
    clean = {}
    for name in QUOTA_FIELDS:
        value = quotas.get(name)
        if value is not None and not 0 <= value <= MAX_QUOTA:
            raise Error.invalid_argument(
                f"{field}.{json_name(name)}", f"must be between 0 and {MAX_QUOTA}, got {value}"
            )
        clean[name] = value
    unknown = set(quotas) - set(QUOTA_FIELDS)
    if unknown:
        raise Error.invalid_argument(field, f"unknown quota {sorted(unknown)[0]!r}")
    return clean


def json_name(name: str) -> str:
    """The JSON (lowerCamelCase) spelling of a field name, as clients send it."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)
