"""The committed generated code (*_pb2.py, *_pb2.pyi, *_connect.py) must match what `make proto`
generates from proto/."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_generated_code_is_up_to_date(tmp_path):
    protos = sorted(str(p.relative_to(ROOT / "proto")) for p in (ROOT / "proto").rglob("*.proto"))
    assert protos, "no .proto files found"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            "-I",
            "proto",
            f"--python_out={tmp_path}",
            f"--pyi_out={tmp_path}",
            f"--connectrpc_out={tmp_path}",
            "--connectrpc_opt=protobuf=google",
            *protos,
        ],
        cwd=ROOT,
        check=True,
        # protoc finds protoc-gen-connectrpc on PATH, in the virtualenv's bin.
        env={**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")},
    )
    generated = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.py*"))
    assert any(p.name.endswith("_connect.py") for p in generated)
    stale = [str(p) for p in generated if (ROOT / p).read_bytes() != (tmp_path / p).read_bytes()]
    assert not stale, f"generated code is stale, run `make proto`: {stale}"


def test_sdk_generated_code_is_up_to_date(tmp_path):
    """The SDK's copy (imports rewritten into cpsdk._gen) is what scripts/gen_sdk_proto.py makes."""
    sdk_gen = ROOT / "sdk" / "src" / "cpsdk" / "_gen"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_sdk_proto.py"), str(tmp_path)], cwd=ROOT, check=True)
    generated = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.py*"))
    committed = sorted(p.relative_to(sdk_gen) for p in sdk_gen.rglob("*.py*") if "__pycache__" not in p.parts)
    assert generated == committed, "SDK generated files differ, run `make proto`"
    stale = [str(p) for p in generated if (sdk_gen / p).read_bytes() != (tmp_path / p).read_bytes()]
    assert not stale, f"SDK generated code is stale, run `make proto`: {stale}"


def test_sdk_and_server_code_share_one_process():
    """Either import order: the SDK's copy never shadows the server's `containers` app."""
    script = (
        "import cpsdk\n"
        "from cpsdk._gen.containers.api.v1 import job_pb2 as sdk\n"
        "import django, os\n"
        "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'controlplane.settings')\n"
        "django.setup()\n"
        "import workloads.models\n"
        "from containers.api.v1 import job_pb2 as server\n"
        "assert sdk.RunJobRequest.DESCRIPTOR is server.RunJobRequest.DESCRIPTOR\n"
        "import containers\n"
        "assert containers.__file__.startswith(os.getcwd())\n"
    )
    subprocess.run([sys.executable, "-c", script], cwd=ROOT, check=True, timeout=60)
