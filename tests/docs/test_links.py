"""Every relative link of the README, docs/ and bench/ resolves: to a file or folder of the
repository, and to a heading of that page when it names one (`page.md#heading`, GitHub's anchors).
Links inside code (fenced blocks, `inline code`) are text, not links, and are not checked."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.docs.test_examples import FENCE

PAGES = sorted(
    [ROOT / "README.md", ROOT / "sdk" / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "bench").glob("*.md")]
)
LINK = re.compile(r"\[(?P<text>[^\]]*)\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
INLINE_CODE = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6}[ \t]+(?P<title>[^\n]+)", re.MULTILINE)
CLOSING_HASHES = re.compile(r"[ \t]+#+[ \t]*\Z")  # "## Title ##"
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # https:, mailto:, ...


def prose(text: str) -> str:
    """The text outside code: fenced blocks and inline code spans blanked out."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def anchors(text: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces → hyphens, -1, -2 for repeats."""
    found: set[str] = set()
    repeats: dict[str, int] = {}
    for match in HEADING.finditer(FENCE.sub("", text)):
        title = LINK.sub(lambda link: link["text"], CLOSING_HASHES.sub("", match["title"]).strip())
        slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        count = repeats.get(slug, 0)
        repeats[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def links(page: Path) -> list[str]:
    return [match["target"] for match in LINK.finditer(prose(page.read_text()))]


def test_anchors_follow_github():
    text = (
        "# Try it\n## Settings (environment or `.env`)\n## Production: nginx\n```sh\n# not a heading\n```\n## Try it\n"
    )
    assert anchors(text) == {"try-it", "settings-environment-or-env", "production-nginx", "try-it-1"}
    assert links(ROOT / "README.md")  # the README links to its pages


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_relative_links_resolve(page):
    broken = []
    for target in links(page):
        if EXTERNAL.match(target):
            continue
        path, _, fragment = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists() or not resolved.is_relative_to(ROOT):
            broken.append(f"{target}: no such file")
        elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved.read_text()):
            broken.append(f"{target}: no heading #{fragment} in {resolved.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


# A path in `code` whose first folder is one of the repository's (controlplane/..., tests/...).
# Checked in the README and docs/ only: bench/*.md are records of runs, and name buckets as
# `namespace/name` (`bench/million`).
CODE_SPAN = re.compile(r"`([^`\s]+)`")
PLACEHOLDER = re.compile(r"[<>{}$…]")


def repository_paths(text: str) -> list[str]:
    folders = {path.name for path in ROOT.iterdir() if path.is_dir() and (ROOT / path.name / "__init__.py").exists()}
    folders |= {"bench", "deploy", "docs", "proto", "scripts", "sdk", "templates", "tests"}
    return [
        span
        for span in CODE_SPAN.findall(FENCE.sub("", text))
        if "/" in span and span.split("/")[0] in folders and not PLACEHOLDER.search(span)
    ]


@pytest.mark.parametrize(
    "page", [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))], ids=lambda page: page.name
)
def test_repository_paths_named_in_code_exist(page):
    # Pages name modules and tests as `controlplane/rpc/interceptors.py`: when one moves, say where.
    missing = [path for path in repository_paths(page.read_text()) if not any(ROOT.glob(path.rstrip("/")))]
    assert not missing, f"{page.relative_to(ROOT)} names paths that do not exist: {missing}"
