"""Run only by tests/suite/test_hygiene.py, in a pytest of its own (the name is not test_*)."""

import os
from pathlib import Path

STRAY = Path(__file__).with_name("stray-output.tmp")


def test_sees_a_clean_environment():
    assert not [n for n in os.environ if n.startswith(("CP_", "CPCTL_", "OIDC_")) or n == "KUBECONFIG"]
    assert "cp-tests-config-" in os.environ["XDG_CONFIG_HOME"]


def test_leaves_a_stray_file():
    if os.environ.get("SAMPLE_DIRTY"):
        STRAY.write_text("left behind\n")
