"""Default deny entries (issue 22, finding 3): GCE's IPv6 metadata address, every name below
metadata.goog, and IPv4 addresses inside the local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215)."""

import pytest

from controlplane.auth import Role

pytestmark = pytest.mark.django_db

GRANT = "containers.api.v1.EgressService/GrantEgress"
NETWORKS = "CONTAINERS_EGRESS_DENIED_NETWORKS"


@pytest.fixture
def operator(namespace, make_key):
    return make_key("team-a", Role.OPERATOR)


@pytest.mark.parametrize(
    "target, rule",
    [
        # Google Cloud metadata over IPv6, however the address is written.
        ("[fd20:ce::254]", f"{NETWORKS} fd20:ce::254/128"),
        ("[fd20:ce::254]:80", f"{NETWORKS} fd20:ce::254/128"),
        ("[FD20:CE::254]", f"{NETWORKS} fd20:ce::254/128"),
        ("[fd20:00ce:0000:0000:0000:0000:0000:0254]", f"{NETWORKS} fd20:ce::254/128"),
        ("[fd20:ce:0:0:0:0:0:254]:443", f"{NETWORKS} fd20:ce::254/128"),
        # The name and every name below it.
        ("metadata.goog", "CONTAINERS_EGRESS_DENIED_HOSTS .metadata.goog"),
        ("computemetadata.metadata.goog:80", "CONTAINERS_EGRESS_DENIED_HOSTS .metadata.goog"),
        ("A.B.Metadata.GOOG", "CONTAINERS_EGRESS_DENIED_HOSTS .metadata.goog"),
        # Local-use NAT64: /96 (the last 32 bits) ...
        ("[64:ff9b:1::a9fe:a9fe]", f"{NETWORKS} 169.254.0.0/16"),
        ("[64:ff9b:1::169.254.169.254]:80", f"{NETWORKS} 169.254.0.0/16"),
        ("[64:ff9b:1::7f00:1]", f"{NETWORKS} 127.0.0.0/8"),
        # ... and the RFC 6052 positions of shorter prefixes inside the /48 (bits 64-71 skipped).
        # Every reading is checked, so another reading (0.x.x.x) may be the rule that is named.
        ("[64:ff9b:1:a9fe:a9:fe00::]", NETWORKS),  # /48
        ("[64:ff9b:1:a9:fe:a9fe::]", NETWORKS),  # /56
        ("[64:ff9b:1:0:a9:fea9:fe00:0]", NETWORKS),  # /64
    ],
)
def test_new_default_entries_are_denied(rpc, operator, target, rule):
    result = rpc(GRANT, {"namespace": "team-a", "target": target}, token=operator)
    assert result.code == "permission_denied", result
    assert rule in result.body["message"]


@pytest.mark.parametrize(
    "target", ["metadata.goog.example.com", "notmetadata.goog", "[64:ff9b:1::808:808]", "[fd20:ce::255]"]
)
def test_neighbours_are_still_granted(rpc, operator, target):
    result = rpc(GRANT, {"namespace": "team-a", "target": target}, token=operator)
    assert result.status == 200, result
