"""Egress that is never granted: the sandbox host's loopback, link-local addresses and the cloud
metadata services, whatever the caller's role.

The lists are settings (CONTAINERS_EGRESS_DENIED_NETWORKS, CONTAINERS_EGRESS_DENIED_HOSTS) and
the refusal names the rule that matched. IPv6 forms that carry an IPv4 address
(::ffff:a.b.c.d, NAT64 64:ff9b::/96 and the local-use 64:ff9b:1::/48, 6to4, ::a.b.c.d) are
checked as that IPv4 address too.

A host name is checked as written: it is resolved where the connection is made, so the sandbox
runtime must apply the same networks to what names resolve to (DNS rebinding).
"""

from __future__ import annotations

import ipaddress
import socket
from functools import lru_cache

from django.conf import settings

from controlplane.errors import Error

NETWORKS_SETTING = "CONTAINERS_EGRESS_DENIED_NETWORKS"
HOSTS_SETTING = "CONTAINERS_EGRESS_DENIED_HOSTS"
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
# RFC 8215: the operator picks the prefix length inside the /48, so every RFC 6052 position counts.
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
_NAT64_LOCAL_PREFIX_BYTES = (6, 7, 8)  # /48, /56, /64; /96 is the last four bytes
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
    if address in _NAT64 or address in _IPV4_COMPATIBLE or address in _NAT64_LOCAL:
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    if address in _NAT64_LOCAL:
        without_u = address.packed[:8] + address.packed[9:]  # bits 64-71 (RFC 6052 "u") carry no address
        found.extend(
            ipaddress.IPv4Address(without_u[at : at + 4])
            for at in _NAT64_LOCAL_PREFIX_BYTES
            if not any(without_u[at + 4 :])  # that layout leaves the bits after the address zero
        )
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
