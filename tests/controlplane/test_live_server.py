"""Smoke test of the real server process: the same answers over a real socket."""

import json
import urllib.request

import pytest

from controlplane.auth import Role


@pytest.mark.e2e
def test_live_server_answers_rpc(live_service, transactional_db, make_key, namespace):
    key = make_key("team-a", Role.ADMIN)
    request = urllib.request.Request(
        live_service.url + "/containers.api.v1.NamespaceService/GetNamespace",
        data=json.dumps({"namespace": "team-a"}).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200
        assert json.load(response)["namespace"] == "team-a"
