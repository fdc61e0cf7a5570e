"""A real Prometheus server (Debian's `prometheus`) for tests: temp config and storage, free port."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

from tests.support.live import free_port, stop_process


def prometheus_binary() -> str:
    found = shutil.which("prometheus") or "/usr/bin/prometheus"
    if not Path(found).exists():
        raise RuntimeError("prometheus is not installed: ./scripts/bootstrap --tests installs it")
    return found


class PrometheusProcess:
    def __init__(self, directory: Path, target: str, token: str, interval: str = "1s"):
        self.directory = directory
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.config = directory / "prometheus.yml"
        self.config.write_text(
            json.dumps(  # YAML is a superset of JSON
                {
                    "global": {"scrape_interval": interval, "scrape_timeout": interval},
                    "scrape_configs": [
                        {
                            "job_name": "controlplane",
                            "authorization": {"type": "Bearer", "credentials": token},
                            "static_configs": [{"targets": [target]}],
                        }
                    ],
                }
            )
        )
        self.process: subprocess.Popen | None = None

    def start(self) -> PrometheusProcess:
        self.log = open(self.directory / "prometheus.log", "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [
                prometheus_binary(),
                f"--config.file={self.config}",
                f"--storage.tsdb.path={self.directory / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"prometheus exited:\n{self.log_text()}")
            try:
                urllib.request.urlopen(self.url + "/-/ready", timeout=1)
                return self
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"prometheus did not become ready:\n{self.log_text()}")

    def query(self, promql: str) -> list[dict]:
        url = f"{self.url}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
        with urllib.request.urlopen(url, timeout=5) as response:
            answer = json.load(response)
        assert answer["status"] == "success", answer
        return answer["data"]["result"]

    def log_text(self) -> str:
        return (self.directory / "prometheus.log").read_text(errors="replace")

    def stop(self) -> None:
        stop_process(self.process)
        self.log.close()
