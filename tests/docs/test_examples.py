"""Every example in README.md and docs/*.md runs verbatim, in document order, on a fresh clone.

The pages run in one documented order: README.md first, then the pages of docs/ in the order
of the numbered list under "## Documentation" in README.md (`pages()`). That list is the one
place the order is kept, and every page of docs/ must be in it (a new page: one new file and
one new line there). Convention for the pages (for everyone who adds a section or a page):

- A ```sh block is an example: it runs. All ```sh blocks of all pages run in ONE bash session
  (`set -euo pipefail`), in that order, from the root of a fresh clone, so variables set in
  one block (`export KEY=...`) are there in the next, on later pages too. PORT is set to a free
  port: address the service as `http://127.0.0.1:${PORT:-8000}` (the README's walkthrough
  exports it as CP_URL, and KEY, an ADMIN key of namespace team-a).
- A ```python block runs where it stands in that order, as `.venv/bin/python -P` (so that the
  repository's own packages do not shadow generated code) from the clone's root; it sees
  exported shell variables in os.environ (CP_URL, KEY).
- Anything else is shown, never run: ```text for synopses with placeholders (NS, KEY_ID),
  commands for other machines (production), commands that need a person (createsuperuser, a
  browser), and the two set-up commands at the very top of README.md,
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
from tests.support.live import free_port

README = ROOT / "README.md"
DOCS = ROOT / "docs"
# "1. [Calling the API](docs/api.md): ..." in the README's "## Documentation" list.
LISTED_PAGE = re.compile(r"^\d+\. \[[^\]]*\]\((docs/[^)#\s]+\.md)\)", re.MULTILINE)
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


def section(text: str, title: str) -> str:
    """The text of the `## title` section, up to the next `## ` heading."""
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def listed_pages() -> list[str]:
    """The docs/ pages the README lists under "## Documentation", in that order."""
    return LISTED_PAGE.findall(section(README.read_text(), "Documentation"))


def pages() -> list[Path]:
    """Every page whose examples run, in the order they run: the README, then the listed pages."""
    return [README, *(ROOT / name for name in listed_pages())]


def script(text: str, name: str = "README.md") -> str:
    """One bash script: every sh block verbatim, every python block through the venv's python."""
    return script_of([(name, text)])


def script_of(documents: list[tuple[str, str]]) -> str:
    """script() of several pages (name, text), one after the other, in one bash session."""
    parts = ["set -euo pipefail"]
    for name, text in documents:
        for number, (language, body, line) in enumerate(blocks(text)):
            if language not in RUNS:
                continue
            parts.append(f'echo "### {name} block {number} (line {line}, {language}) $(date +%s.%N)" >&2')
            if language == "sh":
                parts.append(body)
            else:
                parts.append(f".venv/bin/python -P - <<'README_PYTHON_BLOCK'\n{body}README_PYTHON_BLOCK")
    parts.append('echo "### examples done $(date +%s.%N)" >&2')
    return "\n".join(parts) + "\n"


def documents() -> list[tuple[str, str]]:
    return [(page.relative_to(ROOT).as_posix(), page.read_text()) for page in pages()]


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
    language, body, _ = blocks(text)[0]
    assert [line.split("#")[0].strip() for line in body.strip().splitlines()] == ["make run", "make test"]
    assert language == "text" and text.index("```") < text.index("\n## ")  # the README's first lines
    # The rest holds for every page, in the order the pages run.
    text = "\n".join(page_text for _, page_text in documents())
    found = blocks(text)
    shell = "\n".join(body for language, body, _ in found if language == "sh")
    assert re.search(r"^make run &", shell, re.MULTILINE) and re.search(r"^make wait", shell, re.MULTILINE)
    assert shell.index("make run &") < shell.index("make wait") < shell.index("manage.py")
    assert "../shared" not in text and "shared/seeds" not in text  # a clone has only proto/
    # Commands go through the venv's python, never a bare manage.py.
    for name, page_text in documents():
        for language, body, line in blocks(page_text):
            if language in {"sh", "text"}:
                bare = body.count("manage.py") - body.count(".venv/bin/python manage.py")
                assert bare == 0, f"bare manage.py in {name}, the block at line {line}"
    assert shell.index("make tools") < shell.index("node_modules/.bin/buf")  # buf installed before it is used
    # The other development tools too, on whichever page uses them first; `make run` installs
    # cpctl and cprunner, so they may come right after it.
    assert shell.index("make tools") < shell.index("make lint")
    assert shell.index("make wait") < min(shell.index(".venv/bin/cpctl"), shell.index(".venv/bin/cprunner"))


def test_every_docs_page_is_listed_in_the_readme():
    listed = listed_pages()
    assert len(listed) == len(set(listed)), listed
    on_disk = sorted(path.relative_to(ROOT).as_posix() for path in DOCS.glob("*.md"))
    missing = sorted(set(on_disk) - set(listed))
    assert not missing, f"add {missing} to the numbered list under '## Documentation' in README.md"
    assert sorted(listed) == on_disk  # and nothing listed is missing on disk


def test_pages_run_readme_first_then_the_listed_order():
    names = [name for name, _ in documents()]
    assert names == ["README.md", *listed_pages()]
    generated = script_of([("a.md", "```sh\necho one\n```\n"), ("b.md", "```sh\necho two\n```\n")])
    assert generated.index("### a.md block 0 (line 1, sh)") < generated.index("echo one") < generated.index("echo two")


def test_script_keeps_document_order_and_runs_only_sh_and_python():
    text = "a\n```sh\necho one\n```\n```text\nnot run\n```\n```python\nprint(2)\n```\n```sh\necho three\n```\n"
    generated = script(text)
    assert "not run" not in generated
    assert generated.index("echo one") < generated.index("print(2)") < generated.index("echo three")
    assert ".venv/bin/python -P - <<'README_PYTHON_BLOCK'\nprint(2)\nREADME_PYTHON_BLOCK" in generated


@pytest.mark.e2e
def test_examples_run_verbatim_in_order_on_a_fresh_clone(tmp_path):
    clone = tmp_path / "clone"
    fresh_clone(clone)
    pages = documents()
    (tmp_path / "readme.sh").write_text(script_of(pages))
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
    assert returncode == 0, f"examples failed (exit {returncode}); output:\n{output[-6000:]}"
    # Not anchored at the line start: an example's output need not end with a newline.
    marks = re.findall(r"### (\S+ block \d+ \(line \d+, \w+\)|examples done) (\d+\.\d+)(?=\n|\Z)", output)
    runnable = sum(1 for _, text in pages for language, _, _ in blocks(text) if language in RUNS)
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
