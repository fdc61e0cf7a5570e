"""cpctl's contexts, like kubeconfig's: `$XDG_CONFIG_HOME/cpctl/config.toml` (default
`~/.config/cpctl/`), a base URL, an optional namespace and an optional credential each.

    current-context = "dev"

    [contexts.dev]
    base-url = "http://127.0.0.1:8000"
    namespace = "team-a"
    api-key = "cpk_…"

The directory is kept 0700 and the file 0600 (it may hold a credential).
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

FIELDS = ("base-url", "namespace", "api-key")


def config_dir() -> Path:
    """The config directory; an existing one open to others (an older cpctl left 0755) is
    tightened to 0700 whenever cpctl looks into it."""
    path = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "cpctl"
    try:
        if path.stat().st_mode & 0o077:
            path.chmod(0o700)
    except FileNotFoundError:
        pass
    return path


def private_dir() -> Path:
    """The config directory, created 0700 if missing."""
    path = config_dir()
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def write_private(path: Path, text: str) -> None:
    """Writes `text` to a file created 0600 from the start (no window where others read it)."""
    private_dir()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as file:
        file.write(text)
    os.chmod(path, 0o600)


def config_path() -> Path:
    return config_dir() / "config.toml"


def load() -> dict:
    try:
        with config_path().open("rb") as file:
            data = tomllib.load(file)
    except FileNotFoundError:
        return {"contexts": {}}
    data.setdefault("contexts", {})
    return data


def save(data: dict) -> Path:
    # TOML basic strings share JSON's escapes for everything a URL, a name or a key holds.
    lines = []
    if data.get("current-context"):
        lines.append(f"current-context = {json.dumps(data['current-context'])}")
    for name, context in sorted(data["contexts"].items()):
        lines += ["", f"[contexts.{json.dumps(name)}]"]
        lines += [f"{key} = {json.dumps(context[key])}" for key in FIELDS if context.get(key)]
    path = config_path()
    write_private(path, "\n".join(lines) + "\n")
    return path


def current(name: str | None = None) -> tuple[str, dict]:
    """The context to use: `name` (--context / CPCTL_CONTEXT), else current-context; ({}, "")
    when there is none. A name that is not defined is a KeyError naming the defined ones."""
    data = load()
    name = name or data.get("current-context", "")
    if not name:
        return "", {}
    if name not in data["contexts"]:
        raise KeyError(name)
    return name, data["contexts"][name]
