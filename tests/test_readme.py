"""Every example in README.md runs verbatim, in document order, on a fresh clone.

Convention for README.md (for everyone who adds a section):

- A ```sh block is an example: it runs. All ```sh blocks run in ONE bash session
  (`set -euo pipefail`), in document order, from the root of a fresh clone, so variables set
  in one block (`export KEY=...`) are there in the next. PORT is set to a free port: address
  the service as `http://127.0.0.1:${PORT:-8000}` (the walkthrough exports it as CP_URL).
- A ```python block runs where it stands in that order, as `.venv/bin/python -P` (so that the
  repository's own packages do not shadow generated code) from the clone's root; it sees
  exported shell variables in os.environ (CP_URL, KEY).
- Anything else is shown, never run: ```text for synopses with placeholders (NS, KEY_ID),
  commands for other machines (production), and the two set-up commands at the very top,
  which serve forever (`make run`, run here in the walkthrough as `make run &` + `make wait`)
  or run this whole suite (`make test`, what CI runs).

"Fresh clone": `git clone` of this repository, with the working tree's uncommitted changes
copied over, so no .venv, node_modules or var/. pip's and npm's caches are used as usual.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.live import free_port

README = ROOT / "README.md"
FENCE = re.compile(r"^```(?P<info>[^\n`]*)\n(?P<body>.*?)^```[ \t]*(?=\n|\Z)", re.MULTILINE | re.DOTALL)
RUNS = {"sh", "python"}
TIMEOUT_SECONDS = 600
# Variables of this test process that must not leak into a newcomer's shell.
UNSET = {"DATABASE_URL", "DJANGO_SETTINGS_MODULE", "VIRTUAL_ENV", "PYTHONPATH", "PORT", "CP_URL", "KEY"}


def blocks(text: str) -> list[tuple[str, str, int]]:
    """(language, body, line number) of every fenced block, in document order."""
    return [
        (match["info"].strip().split(" ")[0], match["body"], text.count("\n", 0, match.start()) + 1)
        for match in FENCE.finditer(text)
    ]


def script(text: str) -> str:
    """One bash script: every sh block verbatim, every python block through the venv's python."""
    parts = ["set -euo pipefail"]
    for number, (language, body, line) in enumerate(blocks(text)):
        if language not in RUNS:
            continue
        parts.append(f'echo "### README block {number} (line {line}, {language}) $(date +%s.%N)" >&2')
        if language == "sh":
            parts.append(body)
        else:
            parts.append(f".venv/bin/python -P - <<'README_PYTHON_BLOCK'\n{body}README_PYTHON_BLOCK")
    parts.append('echo "### README done $(date +%s.%N)" >&2')
    return "\n".join(parts) + "\n"


def fresh_clone(destination: Path) -> None:
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(destination)], check=True, timeout=120)
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, check=True, capture_output=True, timeout=60,
    ).stdout.decode()  # fmt: skip
    for name in filter(None, listed.split("\0")):
        source, target = ROOT / name, destination / name
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
        elif target.exists():
            target.unlink()  # deleted in the working tree, not yet committed


def test_readme_layout_follows_the_convention():
    text = README.read_text()
    found = blocks(text)
    language, body, _ = found[0]
    assert [line.split("#")[0].strip() for line in body.strip().splitlines()] == ["make run", "make test"]
    assert language == "text" and text.index("```") < text.index("\n## ")  # the README's first lines
    shell = "\n".join(body for language, body, _ in found if language == "sh")
    assert re.search(r"^make run &", shell, re.MULTILINE) and re.search(r"^make wait", shell, re.MULTILINE)
    assert shell.index("make run &") < shell.index("make wait") < shell.index("manage.py")
    assert "../shared" not in text and "shared/seeds" not in text  # a clone has only proto/
    # Commands go through the venv's python, never a bare manage.py.
    for language, body, line in found:
        if language in {"sh", "text"}:
            bare = body.count("manage.py") - body.count(".venv/bin/python manage.py")
            assert bare == 0, f"bare manage.py in the block at line {line}"
    assert shell.index("make tools") < shell.index("node_modules/.bin/buf")  # buf installed before it is used


def test_script_keeps_document_order_and_runs_only_sh_and_python():
    text = "a\n```sh\necho one\n```\n```text\nnot run\n```\n```python\nprint(2)\n```\n```sh\necho three\n```\n"
    generated = script(text)
    assert "not run" not in generated
    assert generated.index("echo one") < generated.index("print(2)") < generated.index("echo three")
    assert ".venv/bin/python -P - <<'README_PYTHON_BLOCK'\nprint(2)\nREADME_PYTHON_BLOCK" in generated


@pytest.mark.e2e
def test_readme_examples_run_verbatim_in_order_on_a_fresh_clone(tmp_path):
    clone = tmp_path / "clone"
    fresh_clone(clone)
    (tmp_path / "readme.sh").write_text(script(README.read_text()))
    status_before = _status(clone)
    env = {name: value for name, value in os.environ.items() if name not in UNSET and not name.startswith("PYTEST")}
    env["PORT"] = str(free_port())
    log_path = tmp_path / "readme.log"
    with open(log_path, "wb") as log:
        # Its own process group: `make run &` is stopped with everything else at the end.
        process = subprocess.Popen(
            ["bash", str(tmp_path / "readme.sh")], cwd=clone, env=env, stdin=subprocess.DEVNULL,
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        try:
            returncode = process.wait(TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            returncode = None
        finally:
            _stop_group(process)
    output = log_path.read_text(errors="replace")
    assert returncode == 0, f"README examples failed (exit {returncode}); output:\n{output[-6000:]}"
    # Not anchored at the line start: an example's output need not end with a newline.
    marks = re.findall(r"### README (block \d+ \(line \d+, \w+\)|done) (\d+\.\d+)(?=\n|\Z)", output)
    runnable = sum(1 for language, _, _ in blocks(README.read_text()) if language in RUNS)
    assert len(marks) == runnable + 1, output[-6000:]
    for (name, started), (_, ended) in itertools.pairwise(marks):
        print(f"{name}: {float(ended) - float(started):.1f} s")
    print(*re.findall(r"^ready: .*", output, re.MULTILINE))  # make wait: the first start's duration
    # A newcomer's clone stays clean: no rewritten package-lock.json, no sdk/build/, no logs outside var/.
    assert _status(clone) == status_before


def _status(clone: Path) -> str:
    return subprocess.run(
        ["git", "status", "--short", "--untracked-files=all"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout


def _stop_group(process: subprocess.Popen) -> None:
    """Ends the examples' process group (bash, `make run &` and its server); it was started here."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        time.sleep(1)
    process.wait(10)
