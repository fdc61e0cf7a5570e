"""cprunner's command line: usage errors exit 2, say what is wrong, and never print a key."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cprunner.cli import containers_conf

KEY = "cpk_do-not-print-me"


def cprunner(*args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CP_")}
    return subprocess.run(
        [sys.executable, "-m", "cprunner", *args], capture_output=True, text=True, env={**clean, **env}, timeout=30
    )


def test_the_process_engine_refuses_to_start_without_its_flag():
    result = cprunner("--engine", "process", CP_URL="http://127.0.0.1:9", CP_RUNNER_KEY=KEY)
    assert result.returncode == 2
    assert "--i-understand-process-engine-is-unsafe" in result.stderr
    assert "no isolation" in result.stderr


def test_url_and_key_are_required():
    result = cprunner("--engine", "podman", CP_RUNNER_KEY=KEY)
    assert (result.returncode, result.stdout) == (2, "")
    assert "URL is required: --url or CP_URL" in result.stderr
    result = cprunner("--engine", "podman", "--url", "http://127.0.0.1:9")
    assert result.returncode == 2
    assert "the runner key is required: set CP_RUNNER_KEY" in result.stderr


def test_a_key_in_a_wrong_argument_is_not_echoed():
    result = cprunner("--engine", "podman", "--kye", KEY, CP_URL="http://127.0.0.1:9")
    assert result.returncode == 2
    assert "unrecognized arguments: --kye cpk_…" in result.stderr
    assert KEY not in result.stderr + result.stdout


def test_bad_values_are_usage_errors():
    for args, message in [
        (("--concurrency", "0"), "must be at least 1, not 0"),
        (("--kinds", "job,vm"), "kinds are a comma-separated subset of job,sandbox,build"),
        (("--engine", "docker"), "invalid choice: 'docker'"),
        (("--poll-seconds", "30"), "must be 1..20 (the server waits at most 20 s), not 30"),
    ]:
        result = cprunner("--engine", "podman", *args, CP_URL="http://127.0.0.1:9", CP_RUNNER_KEY=KEY)
        assert result.returncode == 2, args
        assert message in result.stderr


def test_an_unreachable_podman_is_a_clear_error(tmp_path):
    socket = tmp_path / "none.sock"
    result = cprunner(
        "--engine", "podman", "--podman-socket", str(socket), CP_URL="http://127.0.0.1:9", CP_RUNNER_KEY=KEY
    )
    assert result.returncode == 1
    assert f"podman's API at unix://{socket} does not answer" in result.stderr
    assert KEY not in result.stderr


def test_the_shipped_containers_conf():
    text = Path(containers_conf()).read_text()
    assert 'runtime = "runc"' in text
    assert 'default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]' in text
    assert cprunner("containers-conf").stdout.strip() == containers_conf()
