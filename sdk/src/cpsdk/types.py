"""Plain values of the API: roles and group bindings."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Role(enum.IntEnum):
    """VIEWER < OPERATOR < ADMIN; the values are the wire's containers.api.v1.Role."""

    VIEWER = 1
    OPERATOR = 2
    ADMIN = 3

    @property
    def wire_name(self) -> str:
        return f"ROLE_{self.name}"

    @classmethod
    def parse(cls, text: str | int | Role) -> Role:
        """Accepts Role.ADMIN, 3, "ADMIN", "admin" and "ROLE_ADMIN"."""
        if isinstance(text, int):
            return cls(text)
        name = text.strip().upper().removeprefix("ROLE_")
        try:
            return cls[name]
        except KeyError:
            raise ValueError(f"unknown role {text!r}; expected one of {', '.join(r.name for r in cls)}") from None


@dataclass(frozen=True)
class Binding:
    """An OIDC group bound to a role in a namespace: Binding("team-a-ops", Role.OPERATOR)."""

    oidc_group: str
    role: Role


@dataclass(frozen=True)
class InternalTarget:
    """An internal egress target of a namespace: a bare name granted by GrantEgress."""

    name: str
    host: str
    ports: tuple[int, ...] = ()
