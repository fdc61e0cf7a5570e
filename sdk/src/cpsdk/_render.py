"""How cpctl shows API objects: tables (`-o wide` adds columns), details, JSON and YAML.

Tables are for people: enum values as short words (`queued`, `operator`), times as ages
(`3m`, `2d`), commands as shell words (`shlex.join`), state words coloured on a terminal
unless NO_COLOR is set. JSON is the contract for machines: `json_format.MessageToDict` of
each object, one object (indented) or one per line for listings; it never changes with
the table's looks. YAML is the same data, block style.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from google.protobuf import json_format
from google.protobuf.descriptor import EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

CHUNK = 50  # rows rendered together, so long listings stream page by page
FORMATS = ("table", "wide", "json", "yaml")


def as_dict(message: Message) -> dict:
    """protobuf's JSON mapping, with map entries sorted by key: a map's own iteration order
    changes from run to run, and the JSON output is a contract."""
    return _sorted_maps(message, json_format.MessageToDict(message))


def _sorted_maps(message: Message, data: dict) -> dict:
    for field in message.DESCRIPTOR.fields:
        value = data.get(field.json_name)
        if field.message_type is None or not isinstance(value, (dict, list)):
            continue  # scalars, and well-known types rendered as strings (Timestamp)
        if field.message_type.GetOptions().map_entry:
            data[field.json_name] = dict(sorted(value.items()))
        elif field.is_repeated:
            for item, item_data in zip(getattr(message, field.name), value, strict=True):
                _sorted_maps(item, item_data)
        else:
            _sorted_maps(getattr(message, field.name), value)
    return data


# ---- one value -------------------------------------------------------------------------------


def enum_word(enum: EnumDescriptor, number: int) -> str:
    """JOB_STATE_QUEUED → queued, ROLE_OPERATOR → operator (the enum's prefix dropped)."""
    value = enum.values_by_number.get(number)
    if value is None:
        return str(number)
    prefix = re.sub(r"(?<!^)(?=[A-Z])", "_", enum.name).upper() + "_"
    return value.name.removeprefix(prefix).lower().replace("_", "-")


def age(then: datetime, now: datetime) -> str:
    """kubectl's ages: 45s, 3m, 5h, 2d, 14d; a time to come (an expiry) as `in 30d`."""
    seconds = int((now - then).total_seconds())
    if seconds < -1:
        return "in " + age(now, then)
    seconds = max(seconds, 0)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _timestamp(ts: Timestamp) -> datetime:
    return ts.ToDatetime(tzinfo=UTC)


def cell(message: Message, name: str, now: datetime, *, detail: bool = False) -> str:
    """Field `name` of `message` as table text, by the field's type; `-` when unset."""
    field = message.DESCRIPTOR.fields_by_name[name]
    value = getattr(message, name)
    if field.message_type is not None and field.message_type.full_name == "google.protobuf.Timestamp":
        if not message.HasField(name):
            return "-"
        when = _timestamp(value)
        if detail:
            shown = age(when, now)
            return f"{when:%Y-%m-%d %H:%M:%S} UTC ({shown if shown.startswith('in ') else shown + ' ago'})"
        return age(when, now)
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        return " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(value.items())) or "-"
    if field.is_repeated:
        if field.message_type is not None:
            return " ".join(shlex.quote(_pair(item, now)) for item in value) or "-"
        if field.type == FieldDescriptor.TYPE_ENUM:
            return ", ".join(enum_word(field.enum_type, v) for v in value) or "-"
        return shlex.join(str(v) for v in value) if value else "-"
    if field.type == FieldDescriptor.TYPE_ENUM:
        return enum_word(field.enum_type, value)
    if field.type == FieldDescriptor.TYPE_BOOL:
        return "yes" if value else "no"
    if field.message_type is not None:
        return _pair(value, now) if message.HasField(name) else "-"
    return str(value) if value != "" else "-"


def _pair(item: Message, now: datetime) -> str:
    """A small message as NAME=VALUE: a group binding `devs=operator`, a role `team-a=admin`,
    quotas `max_sandboxes=2`; anything else as its set fields."""
    fields = item.DESCRIPTOR.fields
    if len(fields) == 2:
        return "=".join(cell(item, f.name, now) for f in fields)
    return ",".join(f"{f.name}={cell(item, f.name, now)}" for f, _ in item.ListFields())


# ---- colour ----------------------------------------------------------------------------------

_COLOURS = {"32": {"active", "ready", "succeeded", "running", "granted", "yes"},
            "33": {"queued", "registered", "building", "pending"},
            "31": {"failed", "revoked", "expired", "cancelled", "no"}}  # fmt: skip
_COLOUR_OF = {word: code for code, words in _COLOURS.items() for word in words}


def use_colour(stream) -> bool:
    """Colour only on a terminal, and never with NO_COLOR set (https://no-color.org)."""
    return not os.environ.get("NO_COLOR") and hasattr(stream, "isatty") and stream.isatty()


# ---- views -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    header: str
    field: str | Callable[[Message, datetime], str]
    wide: bool = False  # shown by `-o wide` and in details only
    state: bool = False  # a status word: coloured on a terminal

    def text(self, message: Message, now: datetime, detail: bool = False) -> str:
        if callable(self.field):
            return self.field(message, now)
        return cell(message, self.field, now, detail=detail)


View = list[Column]


def _plain(value) -> bool:
    return isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9_./@:+-][A-Za-z0-9_./@:+ -]*", value) is not None


def yaml_lines(value, indent: int = 0) -> list[str]:
    """JSON-shaped data as block YAML; strings that could be misread are double-quoted
    (a JSON string is a valid YAML double-quoted scalar)."""
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            return [pad + "{}"]
        lines = []
        for key, item in value.items():
            name = key if _plain(key) and ":" not in key else json.dumps(key)
            if isinstance(item, (dict, list)) and item:
                lines.append(f"{pad}{name}:")
                lines += yaml_lines(item, indent + (2 if isinstance(item, dict) else 0))
            else:
                lines.append(f"{pad}{name}: {_scalar(item)}")
        return lines
    if isinstance(value, list):
        if not value:
            return [pad + "[]"]
        lines = []
        for item in value:
            inner = yaml_lines(item, indent + 2)
            lines.append(f"{pad}- {inner[0].lstrip()}")
            lines += inner[1:]
        return lines
    return [pad + _scalar(value)]


_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "~", "y", "n"}


def _scalar(value) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    text = str(value)
    risky = (
        not _plain(text)
        or text.lower() in _YAML_WORDS
        or re.match(r"[-+.]?[0-9]", text) is not None  # numbers, dates and times
        or text.endswith(" ")
        or ": " in text
    )
    return json.dumps(text, ensure_ascii=False) if risky else text


class Output:
    """Writes results in the chosen format (`table`, `wide`, `json`, `yaml`)."""

    def __init__(self, fmt: str = "table", out=None, now: datetime | None = None):
        self.format = fmt
        self.out = out or sys.stdout
        self.now = now or datetime.now(UTC)
        self.colour = use_colour(self.out) and fmt in ("table", "wide")

    @property
    def json_mode(self) -> bool:
        return self.format == "json"

    def _print(self, text: str = "") -> None:
        print(text, file=self.out)

    def data(self, data) -> None:
        """A plain dict (e.g. an issued key with its plaintext) as JSON or YAML."""
        if self.format == "yaml":
            self._print("\n".join(yaml_lines(data)))
        else:
            self._print(json.dumps(data, indent=2))

    def one(self, message: Message, view: View) -> None:
        if self.format in ("json", "yaml"):
            self.data(as_dict(message))
            return
        width = max(len(c.header) for c in view)
        for column in view:  # details show the wide columns too
            text = column.text(message, self.now, detail=True)
            label = "Created" if column.header == "AGE" else column.header.title()
            self._print(f"{label:<{width}}  {self._paint(text, column)}".rstrip())

    def rows(self, messages: Iterable[Message], view: View) -> None:
        """JSON Lines, a YAML sequence or a table, written a chunk at a time as pages arrive."""
        columns = [c for c in view if self.format == "wide" or not c.wide]
        widths = [len(c.header) for c in columns]
        header_done = False
        iterator = iter(messages)
        while chunk := list(itertools.islice(iterator, CHUNK)):
            if self.format == "json":
                for message in chunk:
                    self._print(json.dumps(as_dict(message)))
            elif self.format == "yaml":
                for message in chunk:
                    self._print("\n".join(yaml_lines([as_dict(message)])))
            else:
                cells = [[c.text(m, self.now) for c in columns] for m in chunk]
                widths = [max(w, *(len(row[i]) for row in cells)) for i, w in enumerate(widths)]
                if not header_done:
                    self._line([c.header for c in columns], widths, columns, header=True)
                    header_done = True
                for row in cells:
                    self._line(row, widths, columns)
            self.out.flush()
        if not header_done and self.format in ("table", "wide"):
            self._line([c.header for c in columns], widths, columns, header=True)

    def table(self, rows: list[list[str]]) -> None:
        """Plain rows of text, the first one the header."""
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        for row in rows:
            self._print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())

    def _paint(self, text: str, column: Column) -> str:
        code = _COLOUR_OF.get(text) if self.colour and column.state else None
        return f"\033[{code}m{text}\033[0m" if code else text

    def _line(self, cells: list[str], widths: list[int], columns: View, header: bool = False) -> None:
        # Pad outside the colour codes, so they never count towards a column's width.
        parts = [
            (text if header else self._paint(text, column)) + " " * (width - len(text))
            for text, width, column in zip(cells, widths, columns, strict=True)
        ]
        self._print("  ".join(parts).rstrip())
