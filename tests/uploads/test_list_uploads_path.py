"""The path of one ListUploads call stays short (bench/list_uploads_path.py counts it): the use case
returns the page's JSON object, and only the RPC module hands it to the wire codecs."""

import re
import subprocess
import sys

from tests.conftest import ROOT

MAX_STOPS = 25  # measured when the read side was split out (29 before)


def test_list_uploads_path():
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "list_uploads_path.py")],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    stops = int(re.search(r"(\d+) stops in \d+ modules", run.stdout)[1])
    assert stops <= MAX_STOPS, run.stdout
    path = [line.split()[0] for line in run.stdout.splitlines()[2:]]
    handler = path.index("uploads.rpc")
    assert path[handler + 1] == "uploads.read.listing", run.stdout
    # The codecs appear only where the runtime decodes the request and encodes the response.
    assert [i for i, module in enumerate(path) if module == "controlplane.rpc.codecs"] == [0, len(path) - 1]
