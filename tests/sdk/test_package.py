"""The SDK stands alone: no Django, its own distribution with the cpctl entry point."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path


def test_distribution_declares_cpctl_and_no_django():
    dist = metadata.distribution("cpsdk")
    requires = [r.split(">")[0].split("<")[0].split("=")[0].strip().lower() for r in dist.requires or []]
    assert set(requires) == {"connectrpc", "protobuf", "googleapis-common-protos", "argcomplete"}
    (entry,) = [e for e in dist.entry_points if e.group == "console_scripts"]
    assert (entry.name, entry.value) == ("cpctl", "cpsdk.cli:main")


def test_importing_the_sdk_and_cli_loads_no_server_code(tmp_path):
    # From an empty directory with -P, so only installed packages are importable.
    script = (
        "import sys, cpsdk, cpsdk.cli, cpsdk.login\n"
        "cpsdk.cli.build_parser()\n"
        "loaded = {m.split('.')[0] for m in sys.modules}\n"
        "bad = loaded & {'django', 'controlplane', 'containers', 'namespaces', 'apikeys', 'uploads'}\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-P", "-c", script], cwd=tmp_path, check=True, timeout=60)


def test_pip_install_from_a_clone_leaves_the_tree_clean(tmp_path):
    # The README's `.venv/bin/pip install ./sdk`, into a scratch target (build isolation off:
    # nothing may download while tests run; flit_core is pinned in requirements-dev.txt).
    root = Path(__file__).resolve().parents[2]
    pip = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index", "-q"]
    subprocess.run([*pip, "--target", str(tmp_path / "site"), str(root / "sdk")], check=True, timeout=300)
    assert (tmp_path / "site" / "cpsdk" / "py.typed").exists()
    assert (tmp_path / "site" / "cpsdk" / "_gen" / "containers" / "api" / "v1" / "job_pb2.pyi").exists()
    leftovers = subprocess.run(
        ["git", "status", "--short", "--untracked-files=all", "--ignored", "sdk"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert leftovers == ""
