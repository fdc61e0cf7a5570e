import re

from django.core.management.base import BaseCommand, CommandError

from controlplane.auth import Principal, Role
from controlplane.commands import ROLE_HELP, command_error, usage_error
from controlplane.errors import Error
from namespaces.services import Binding, set_group_bindings

_GROUP_FIELD = re.compile(r"groups\[(\d+)\]\.\w+: (.*)", re.DOTALL)


class Command(BaseCommand):
    help = (
        "Replaces a namespace's OIDC group bindings with exactly the ones given (full replace). "
        "Each binding is GROUP=ROLE; the role follows the last '=', so groups such as LDAP DNs "
        f"may contain '='. ROLE is {ROLE_HELP}. To remove every binding, pass --clear and no bindings."
    )

    def add_arguments(self, parser):
        parser.add_argument("namespace", metavar="NS", help="namespace name")
        parser.add_argument("bindings", metavar="GROUP=ROLE", nargs="*", help="e.g. eng=OPERATOR platform=ADMIN")
        parser.add_argument("--clear", action="store_true", help="remove every binding (takes no GROUP=ROLE)")

    def handle(self, *args, namespace, bindings, clear, **options):
        # Nothing given is more likely a slip than a wish to lock everyone out: clearing is explicit.
        if clear and bindings:
            raise usage_error("--clear takes no GROUP=ROLE arguments")
        if not clear and not bindings:
            raise usage_error("give at least one GROUP=ROLE, or --clear to remove every binding")
        groups = [_parse(argument) for argument in bindings]
        try:
            result = set_group_bindings(actor=Principal.system(), name=namespace, groups=groups)
        except Error as exc:
            raise _naming_the_argument(exc, bindings) from None
        current = result.group_bindings.order_by("oidc_group")
        for binding in current:
            self.stdout.write(f"{binding.oidc_group}={Role(binding.role).name}")
        if not current:
            self.stderr.write(f"{namespace} has no group bindings.")


def _parse(argument: str) -> Binding:
    group, sep, role = argument.rpartition("=")
    if not sep or not group:
        raise usage_error(f"{argument!r}: expected GROUP=ROLE, e.g. eng=OPERATOR")
    try:
        return Binding(group, Role.parse(role))
    except ValueError as exc:
        raise usage_error(f"{argument!r}: {exc}") from None


def _naming_the_argument(exc: Error, bindings: list[str]) -> CommandError:
    """The service names groups[i]; the operator typed the i-th argument."""
    match = _GROUP_FIELD.fullmatch(exc.message)
    if match and int(match[1]) < len(bindings):
        return CommandError(f"{bindings[int(match[1])]!r}: {match[2]}")
    return command_error(exc)
