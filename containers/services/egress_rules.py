"""Egress that is never granted: the sandbox host's loopback, link-local addresses and the cloud
metadata services, whatever the caller's role.

The lists are settings (CONTAINERS_EGRESS_DENIED_NETWORKS, CONTAINERS_EGRESS_DENIED_HOSTS) and
the refusal names the rule that matched. IPv6 forms that carry an IPv4 address
(::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4, ::a.b.c.d) are checked as that IPv4 address too.

A host name is checked as written: it is resolved where the connection is made, so the sandbox
runtime must apply the same networks to what names resolve to (DNS rebinding).
"""

from __future__ import annotations

import ipaddress
import socket
from functools import lru_cache

from django.conf import settings

from controlplane.rpc import Error

NETWORKS_SETTING = "CONTAINERS_EGRESS_DENIED_NETWORKS"
HOSTS_SETTING = "CONTAINERS_EGRESS_DENIED_HOSTS"
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def check_host(host: str, field: str = "target") -> None:
    """permission_denied naming the rule when egress to `host` (an IP or a name) is always denied."""
    host = host.strip("[]").lower()
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        _check_name(host, field)
        return
    for candidate in (address, *_embedded_ipv4(address)):
        for network in _networks(tuple(getattr(settings, NETWORKS_SETTING))):
            if candidate.version == network.version and candidate in network:
                raise Error.permission_denied(
                    f"{field}: egress to {host} is always denied by rule {NETWORKS_SETTING} {network}"
                )


def _check_name(name: str, field: str) -> None:
    if _is_legacy_ipv4(name):
        # 127.1, 0x7f.0.0.1, 0177.0.0.1: resolvers read these as IPv4 addresses, so they are not names.
        raise Error.invalid_argument(field, f"{name!r} is an IPv4 address in a legacy form; write it as a.b.c.d")
    for rule in getattr(settings, HOSTS_SETTING):
        rule = rule.lower()
        if name == rule.lstrip(".") or (rule.startswith(".") and name.endswith(rule)):
            raise Error.permission_denied(f"{field}: egress to {name} is always denied by rule {HOSTS_SETTING} {rule}")


def _embedded_ipv4(address: IPAddress) -> list[ipaddress.IPv4Address]:
    if address.version == 4:
        return []
    found = [address.ipv4_mapped, address.sixtofour]
    if address in _NAT64 or address in _IPV4_COMPATIBLE:
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return [ip for ip in found if ip is not None]


def _is_legacy_ipv4(name: str) -> bool:
    try:
        socket.inet_aton(name)
    except OSError:
        return False
    return True


@lru_cache(maxsize=4)
def _networks(values: tuple[str, ...]) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(value, strict=False) for value in values)
