#!/usr/bin/env python3
"""Generates the SDK's protobuf and Connect client code from proto/ (run by `make proto`).

The code lives inside the SDK's own package (`cpsdk._gen`), never as a top-level
`containers` package: that name is the server's Django app, and both are imported in one
process by the test suite. protoc writes absolute imports between generated modules
(`from containers.api.v1 import namespace_pb2`); they are rewritten to `cpsdk._gen.…`.
The descriptors themselves keep their proto names, so the wire format is unchanged and a
process holding both copies shares one descriptor per file.

Usage: scripts/gen_sdk_proto.py [OUT_DIR]   (default sdk/src/cpsdk/_gen)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "cpsdk._gen"
DEFAULT_OUT = ROOT / "sdk" / "src" / "cpsdk" / "_gen"


def generate(out: Path) -> None:
    protos = sorted(str(p.relative_to(ROOT / "proto")) for p in (ROOT / "proto").rglob("*.proto"))
    roots = sorted({p.split("/", 1)[0] for p in protos})
    venv_bin = os.path.dirname(sys.executable)  # protoc-gen-connectrpc is installed beside python
    with tempfile.TemporaryDirectory() as raw:
        subprocess.run(  # noqa: S603 - fixed argv: this interpreter, protoc, the repo's protos
            [sys.executable, "-m", "grpc_tools.protoc", "-I", "proto", f"--python_out={raw}", f"--pyi_out={raw}",
             f"--connectrpc_out={raw}", "--connectrpc_opt=protobuf=google", *protos],
            cwd=ROOT, check=True, env={**os.environ, "PATH": venv_bin + os.pathsep + os.environ.get("PATH", "")},
        )  # fmt: skip
        # `from containers.api.v1 import x` and `from controlplane import limits_pb2` alike.
        imports = re.compile(rf"^(from|import) ({'|'.join(map(re.escape, roots))})\b", re.MULTILINE)
        builder = re.compile(rf"(BuildTopDescriptorsAndMessages\(DESCRIPTOR, ')({'|'.join(roots)})\.")
        if out.exists():
            shutil.rmtree(out)
        for source in sorted(Path(raw).rglob("*.py*")):
            target = out / source.relative_to(raw)
            target.parent.mkdir(parents=True, exist_ok=True)
            text = imports.sub(rf"\1 {PACKAGE}.\2", source.read_text())
            target.write_text(builder.sub(rf"\g<1>{PACKAGE}.\2.", text))
    for directory in [out, *(p for p in out.rglob("*") if p.is_dir())]:
        (directory / "__init__.py").write_text("")


if __name__ == "__main__":
    generate(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT)
