"""A real HTTP server process (gunicorn) serving the test database on loopback.

Tests that talk to it must use the `transactional_db` fixture (committed data), because
the server is another process with its own database connections.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_database_url() -> str:
    """DATABASE_URL of the database pytest-django created, for other processes."""
    settings = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{settings['NAME']}"
    user = settings.get("USER") or ""
    password = settings.get("PASSWORD") or ""
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    return f"postgres://{auth}{settings.get('HOST') or '127.0.0.1'}:{settings.get('PORT') or 5432}/{settings['NAME']}"


def stop_process(process: subprocess.Popen | None, timeout: float = 10) -> None:
    """Terminates a process this test run started; kills it if it does not stop in time."""
    if process and process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class ServiceProcess:
    """gunicorn controlplane.wsgi (or `app`) on 127.0.0.1:<free port>, with production-like settings."""

    def __init__(
        self,
        env: dict[str, str] | None = None,
        workers: int = 2,
        port: int | None = None,
        args: tuple[str, ...] = (),
        app: str = "controlplane.wsgi",
    ):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = ROOT / "var" / f"live-server-{self.port}.log"
        self.env = {
            **os.environ,
            "DATABASE_URL": test_database_url(),
            "DATABASE_POOL": "false",
            "DEBUG": "false",
            "SECRET_KEY": "live-test-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "SECURE_SSL_REDIRECT": "false",
            "SESSION_COOKIE_SECURE": "false",
            "CSRF_COOKIE_SECURE": "false",
            "SECURE_HSTS_SECONDS": "0",
            **(env or {}),
        }
        self.workers = workers
        self.args = tuple(args)  # more gunicorn options, e.g. another worker class
        self.app = app
        self.process: subprocess.Popen | None = None

    def start(self) -> ServiceProcess:
        self.log_path.parent.mkdir(exist_ok=True)
        log = open(self.log_path, "wb")  # noqa: SIM115 - kept open for the process's lifetime
        self.process = subprocess.Popen(
            [
                sys.executable, "-m", "gunicorn", self.app,
                "--bind", f"127.0.0.1:{self.port}",
                "--workers", str(self.workers),
                "--timeout", "60",
                "--access-logfile", "-",
                *self.args,
            ],
            cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self._wait_ready()
        return self

    def _wait_ready(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited early:\n{self.log()}")
            try:
                urllib.request.urlopen(self.url + "/healthz", timeout=1)
                return
            except urllib.error.HTTPError:
                return  # any HTTP answer means it is serving
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"server did not start in {timeout}s:\n{self.log()}")

    def log(self) -> str:
        if self.log_path.exists():
            return self.log_path.read_text(errors="replace")
        return getattr(self, "_removed_log", "")

    def stop(self) -> None:
        """Stops the server and removes its log file (KEEP_SERVER_LOGS=1 keeps it, to read after
        the run); `log()` still answers with what it held, for assertions made after stopping."""
        stop_process(self.process)
        self.remove_log()

    def remove_log(self) -> None:
        if not os.environ.get("KEEP_SERVER_LOGS") and self.log_path.exists():
            self._removed_log = self.log_path.read_text(errors="replace")
            self.log_path.unlink(missing_ok=True)
