"""The committed generated code (*_pb2.py, *_pb2.pyi, *_connect.py) must match what `make proto`
generates from proto/."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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
