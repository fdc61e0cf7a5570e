"""Checks every decoded request message passes before any handler sees it.

`validate_request` is the one place: the Validate interceptor calls it for every protocol
and codec. Service-specific rules (names, quotas, ...) stay in the services.
"""

from __future__ import annotations

from google.protobuf.message import Message

from controlplane.errors import Error


def validate_request(message: Message) -> None:
    reject_nul_characters(message)


def reject_nul_characters(message: Message, path: str = "") -> None:
    """NUL is valid in a proto string but PostgreSQL text cannot hold it: refused at the door,
    as Django's form fields do (ProhibitNullCharactersValidator), naming the field."""
    for field, value in message.ListFields():
        name = f"{path}{field.json_name}"
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            items = [(f"{name}[{key!r}]", item) for key, item in value.items()]
            items += [(name, key) for key in value]
        elif field.is_repeated:
            items = [(f"{name}[{i}]", item) for i, item in enumerate(value)]
        else:
            items = [(name, value)]
        for where, item in items:
            if isinstance(item, Message):
                reject_nul_characters(item, where + ".")
            elif isinstance(item, str) and "\x00" in item:
                raise Error.invalid_argument(where, "must not contain NUL characters")
