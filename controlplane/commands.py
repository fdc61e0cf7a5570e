"""Shared pieces of the manage.py ops commands: argument types, and service errors as CommandError.

Commands act as Principal.system() and call the same services as the RPC views and the admin,
so they are validated and audited the same way.
"""

from argparse import ArgumentTypeError
from contextlib import contextmanager

from django.core.management.base import CommandError

from controlplane.auth import Role
from controlplane.errors import Error

ROLE_HELP = "VIEWER, OPERATOR or ADMIN (ROLE_ADMIN and admin work too)"


def role_argument(text: str) -> Role:
    try:
        return Role.parse(text)
    except ValueError as exc:
        raise ArgumentTypeError(str(exc)) from None


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value <= 0:
        raise ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def usage_error(message: str) -> CommandError:
    """Bad arguments: the message on stderr, exit status 2, as argparse's own errors."""
    return CommandError(message, returncode=2)


def command_error(exc: Error) -> CommandError:
    return CommandError(f"{exc.message} ({exc.code.wire_name})")


@contextmanager
def service_errors():
    """Turns a service's Error into a CommandError: its message on stderr, exit status 1."""
    try:
        yield
    except Error as exc:
        raise command_error(exc) from None
