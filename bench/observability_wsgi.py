"""controlplane.wsgi for bench/observability_bench.py's servers: as configured, or, with
BENCH_OBSERVATION=off, with request observation off in each worker (the bench's `off`)."""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from controlplane.wsgi import application

if os.environ.get("BENCH_OBSERVATION") == "off":
    from bench.observability_bench import observe_requests

    observe_requests(False)

__all__ = ["application"]
