#!/usr/bin/env python
"""Runs every benchmark in bench/ (files named *_bench.py), one process each.

Arguments after the script name are passed to every benchmark. The exit status is the
worst of theirs: 0 all goals met, 1 a goal missed, 2 a benchmark could not run.
"""

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    scripts = sorted(BENCH.glob("*_bench.py"))
    if not scripts:
        print("no *_bench.py in bench/", file=sys.stderr)
        return 2
    worst = 0
    for script in scripts:
        print(f"== {script.name}", flush=True)
        status = subprocess.run([sys.executable, str(script), *argv], check=False).returncode
        worst = max(worst, status)
        print(flush=True)
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
