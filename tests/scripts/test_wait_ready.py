"""scripts/wait-ready (`make wait`): returns once /healthz answers; gives up at once when
`make run` reports a failed set-up, so `make run &` + `make wait` never hangs on a dead server."""

import http.server
import os
import subprocess
import sys
import threading
import time

from tests.conftest import ROOT
from tests.support.live import free_port

SCRIPT = str(ROOT / "scripts" / "wait-ready")


def wait_ready(*args: str) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    result = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=60)
    return result, time.monotonic() - started


class Healthy(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/healthz" else 404)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_returns_once_healthz_answers(tmp_path):
    port = free_port()
    server = http.server.HTTPServer(("127.0.0.1", port), Healthy)
    # Listening only after a while, as `make run` does after its set-up.
    starter = threading.Timer(1.0, server.serve_forever)
    starter.start()
    try:
        result, elapsed = wait_ready(
            "--url", f"http://127.0.0.1:{port}/healthz", "--failed-marker", str(tmp_path / "x")
        )
    finally:
        server.shutdown()  # returns once serve_forever, started by the timer, has stopped
        starter.join()
        server.server_close()
    assert result.returncode == 0, result.stderr
    assert f"ready: http://127.0.0.1:{port}/healthz answered after" in result.stderr
    assert 0.9 < elapsed < 30


def test_stops_at_once_when_make_run_failed(tmp_path):
    marker = tmp_path / "run.failed"
    marker.touch()
    result, elapsed = wait_ready("--url", f"http://127.0.0.1:{free_port()}/healthz", "--failed-marker", str(marker))
    assert result.returncode == 1
    assert "`make run` failed" in result.stderr
    assert elapsed < 10


def test_ignores_a_failure_left_by_an_earlier_run_and_times_out(tmp_path):
    marker = tmp_path / "run.failed"
    marker.touch()
    an_hour_ago = time.time() - 3600
    os.utime(marker, (an_hour_ago, an_hour_ago))
    url = f"http://127.0.0.1:{free_port()}/healthz"
    result, elapsed = wait_ready("--url", url, "--failed-marker", str(marker), "--timeout", "1")
    assert result.returncode == 1
    assert f"{url} did not answer within 1 s" in result.stderr
    assert 1 <= elapsed < 10
