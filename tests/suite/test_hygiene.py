"""The suite ignores the caller's environment and leaves the work tree as it found it (issue 23)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.suite.sample import STRAY

pytestmark = pytest.mark.e2e

JUNK = {
    "CP_API_KEY": "cpk_junkjunkjunkjunkjunkjunkjunkjunkjunk",
    "CP_BASE_URL": "http://127.0.0.1:9",
    "CP_NAMESPACE": "nowhere",
    "CPCTL_CONTEXT": "nope",
    "OIDC_ISSUER": "https://idp.invalid",
    "OIDC_CLIENT_ID": "junk",
    "KUBECONFIG": "/nonexistent/kubeconfig",
}


def pytest_run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DJANGO_SETTINGS"))} | env
    env["TESTS_DATABASE_SUFFIX"] = "hygiene"  # not the outer run's test database
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_sample_passes_with_the_callers_credentials_set_to_junk():
    result = pytest_run(
        "tests/suite/sample.py::test_sees_a_clean_environment",
        # The failures issue 23 saw: an SDK test expecting "credential is required", cpctl commands.
        "tests/sdk/test_errors.py::test_typed_errors_carry_decoded_details",
        "tests/sdk/test_cli.py::test_whoami",
        "tests/sdk/test_cli.py::test_exit_codes_follow_the_error_class",
        env=JUNK,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "4 passed" in result.stdout


def test_a_run_that_dirties_the_work_tree_fails():
    try:
        result = pytest_run("tests/suite/sample.py", env={"SAMPLE_DIRTY": "1"})
    finally:
        STRAY.unlink(missing_ok=True)
    assert result.returncode == 1, result.stdout[-3000:]
    assert "2 passed" in result.stdout
    assert "the tests changed the work tree" in result.stdout and "stray-output.tmp" in result.stdout
    clean = pytest_run("tests/suite/sample.py", env={})
    assert clean.returncode == 0, clean.stdout[-3000:]
