"""`make run` as a newcomer meets it (issue 23): cpctl installed, HTTP/2 (h2c) so `buf curl`
works through reflection, requests logged to var/log/requests.log rather than the terminal,
each warning printed once and at its level, and `make stop` to end it."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from controlplane.auth import Role
from tests.conftest import ROOT
from tests.support import live

pytestmark = pytest.mark.e2e

BUF = ROOT / "node_modules" / ".bin" / "buf"
REQUESTS_LOG = ROOT / "var" / "log" / "requests.log"


@pytest.fixture
def make_run(transactional_db, tmp_path):
    port = live.free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DJANGO_SETTINGS"))}
    env.update(PORT=str(port), DATABASE_URL=live.test_database_url())
    output = tmp_path / "make-run.out"
    with open(output, "wb") as out:
        started = time.monotonic()
        process = subprocess.Popen(
            ["make", "--no-print-directory", "run"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    wait = [sys.executable, str(ROOT / "scripts" / "wait-ready"), "--timeout", "180"]
    subprocess.run(wait, env=env, check=True, capture_output=True, timeout=200)
    ready = time.monotonic() - started
    print(f"make run answered /healthz after {ready:.1f} s (venv ready, database migrated)")
    yield port, env, output, process
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)  # its own session, started here
    process.wait(30)


def test_make_run_serves_h2c_logs_requests_aside_and_stops(make_run, namespace, make_key):
    port, env, output, process = make_run
    url = f"http://127.0.0.1:{port}"
    assert Path(ROOT / ".venv" / "bin" / "cpctl").exists()  # installed by make run itself
    key = make_key("team-a", Role.ADMIN)
    before = REQUESTS_LOG.stat().st_size if REQUESTS_LOG.exists() else 0

    # buf curl without --schema: reflection over HTTP/2 (h2c) against the first command.
    buf = subprocess.run(
        [
            str(BUF),
            "curl",
            "--protocol",
            "connect",
            "-H",
            f"Authorization: Bearer {key}",
            "-d",
            json.dumps({"namespace": "team-a"}),
            f"{url}/containers.api.v1.NamespaceService/GetNamespace",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert buf.returncode == 0, buf.stderr
    assert json.loads(buf.stdout)["namespace"] == "team-a"
    cpctl = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "cpctl"), "whoami"],
        env={**env, "CP_BASE_URL": url, "CP_API_KEY": key},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert cpctl.returncode == 0 and "team-a=admin" in cpctl.stdout, cpctl.stderr
    subprocess.run(["curl", "-s", "-o", "/dev/null", f"{url}/auth/login"], check=True, timeout=30)  # no OIDC: 501
    subprocess.run(["curl", "-s", "-o", "/dev/null", f"{url}/admin/nowhere/"], check=True, timeout=30)  # 404 page
    time.sleep(0.5)

    requests = REQUESTS_LOG.read_bytes()[before:].decode()
    assert "ServerReflectionInfo HTTP/2.0" in requests and '"GET /auth/login HTTP/1.1" 501' in requests
    terminal = output.read_text()
    assert "requests are logged to var/log/requests.log" in terminal and "make stop" in terminal
    assert "GetNamespace" not in terminal and '"GET /' not in terminal  # requests are not on the terminal
    assert len(re.findall(r"Not Implemented: /auth/login", terminal)) == 1  # once, not twice
    assert "WARNING django.request Not Implemented: /auth/login" in terminal  # a 501 is no server fault
    assert " ERROR " not in terminal

    stop = subprocess.run(
        ["make", "--no-print-directory", "stop"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert stop.stdout.strip() == f"stopped the server on port {port}"
    process.wait(30)
    assert not (ROOT / "var" / f"run-{port}.pid").exists()
