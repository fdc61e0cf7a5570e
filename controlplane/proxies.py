"""Which peers are our own proxies (TRUSTED_PROXIES), whose headers (X-Request-Start,
X-Request-Id) may be believed: one home for the rule, read by faults and observability."""

from __future__ import annotations

import ipaddress

UNIX_SOCKET = "unix"  # in TRUSTED_PROXIES: the peer on gunicorn's Unix socket (the proxy)


def is_trusted_peer(environ) -> bool:
    """Whether the request came through one of TRUSTED_PROXIES, whose headers may be believed."""
    return is_trusted(environ.get("REMOTE_ADDR", ""), None)


def is_trusted(address: str, trusted_proxies=None) -> bool:
    if trusted_proxies is None:
        from django.conf import settings

        trusted_proxies = settings.TRUSTED_PROXIES
    if not trusted_proxies:
        return False
    if not address:
        # A Unix-socket peer (gunicorn leaves REMOTE_ADDR empty): trusted only when the socket is
        # listed as "unix", i.e. its file permissions admit the proxy alone (deploy/).
        return UNIX_SOCKET in trusted_proxies
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in ipaddress.ip_network(net, strict=False) for net in trusted_proxies if net != UNIX_SOCKET)
