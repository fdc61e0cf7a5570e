"""Who is calling: the principal every handler and permission sees."""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


class Role(enum.IntEnum):
    """VIEWER < OPERATOR < ADMIN; values match containers.api.v1.Role on the wire."""

    VIEWER = 1
    OPERATOR = 2
    ADMIN = 3

    @property
    def wire_name(self) -> str:
        return f"ROLE_{self.name}"

    @classmethod
    def parse(cls, text: str) -> Role:
        """Accepts ADMIN, ROLE_ADMIN, admin (and likewise for the others)."""
        name = text.strip().upper()
        name = name.removeprefix("ROLE_")
        try:
            return cls[name]
        except KeyError:
            choices = ", ".join(r.name for r in cls)
            raise ValueError(f"unknown role {text!r}; expected one of {choices}") from None

    @classmethod
    def choices(cls) -> list[tuple[int, str]]:
        return [(r.value, r.wire_name) for r in cls]


class Kind(enum.StrEnum):
    ANONYMOUS = "anonymous"
    API_KEY = "api_key"
    AGENT = "agent"
    RUNNER = "runner"  # may call only containers.runtime.v1.RunnerService
    USER = "user"
    SYSTEM = "system"


@dataclass(frozen=True)
class Principal:
    """The resolved caller: namespaces with a role in each, and the admin flag.

    `roles` is the caller's own memberships; admin is unconditional across namespaces,
    so `role_in` answers ADMIN everywhere for an admin.
    """

    kind: Kind
    roles: Mapping[str, Role] = field(default_factory=dict)
    admin: bool = False
    key_id: str | None = None
    subject: str | None = None  # user name / OIDC subject for humans
    issuer: str | None = None  # OIDC people: the issuer their subject belongs to; None for local accounts
    display_name: str = ""
    workspace_scope: str | None = None  # agent keys pinned to one workspace
    sandbox_id: str | None = None  # agent keys: the sandbox that holds the key
    scopes: frozenset[str] = frozenset()
    via: str = ""  # "bearer" or "session": how the credential arrived
    failure: str = ""  # why authentication failed, for anonymous principals

    def __post_init__(self):
        object.__setattr__(self, "roles", MappingProxyType(dict(self.roles)))

    @property
    def is_authenticated(self) -> bool:
        return self.kind is not Kind.ANONYMOUS

    def role_in(self, namespace: str) -> Role | None:
        if self.admin:
            return Role.ADMIN
        return self.roles.get(namespace)

    def has_role(self, namespace: str, minimum: Role) -> bool:
        role = self.role_in(namespace)
        return role is not None and role >= minimum

    @property
    def namespaces(self) -> frozenset[str]:
        return frozenset(self.roles)

    def describe(self) -> str:
        """A short, secret-free label for audit records, createdBy and requestId owners.

        Local accounts and OIDC people never share one, whatever the subject: local:root is
        the local account, oidc:<issuer>#root the person the issuer calls root."""
        if self.kind in (Kind.API_KEY, Kind.AGENT, Kind.RUNNER):
            return f"{self.kind.value}:{self.key_id}"
        if self.kind is Kind.USER:
            return local_label(self.subject) if self.issuer is None else oidc_label(self.issuer, self.subject)
        if self.kind is Kind.SYSTEM:
            return f"system:{self.subject or 'manage.py'}"
        return "anonymous"

    @classmethod
    def anonymous(cls, failure: str = "") -> Principal:
        return cls(kind=Kind.ANONYMOUS, failure=failure)

    @classmethod
    def system(cls, name: str = "manage.py") -> Principal:
        """Operators at the shell: whoever can run manage.py already holds the database."""
        return cls(kind=Kind.SYSTEM, admin=True, subject=name, display_name=name)


MAX_LABEL = 300  # the columns that store labels (created_by, audit actor, requestId owner)


def local_label(username: str) -> str:
    return f"local:{username}"  # Django user names are at most 150 characters


def oidc_label(issuer: str, subject: str) -> str:
    # An OIDC subject is unique only within its issuer (OIDC Core §2), and an issuer has no
    # fragment: the first '#' separates them.
    label = f"oidc:{issuer}#{subject}" if issuer else f"oidc:{subject}"
    if len(label) > MAX_LABEL:
        label = "oidc:sha256:" + hashlib.sha256(f"{issuer}#{subject}".encode()).hexdigest()
    return label
