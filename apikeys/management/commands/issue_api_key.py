from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from apikeys.services import issue_api_key
from controlplane.auth import Principal, Role
from controlplane.rpc import Error


def role_argument(text: str) -> Role:
    try:
        return Role.parse(text)
    except ValueError as exc:
        from argparse import ArgumentTypeError

        raise ArgumentTypeError(str(exc)) from None


def positive_int(text: str) -> int:
    from argparse import ArgumentTypeError

    try:
        value = int(text)
    except ValueError:
        raise ArgumentTypeError(f"expected a whole number of days, got {text!r}") from None
    if value <= 0:
        raise ArgumentTypeError(f"must be at least 1, got {value}")
    return value


class Command(BaseCommand):
    help = "Issues an API key and prints its plaintext alone on stdout, once. Store it then: it cannot be shown again."

    def add_arguments(self, parser):
        parser.add_argument("--namespace", required=True, help="namespace the key acts in")
        parser.add_argument(
            "--role", required=True, type=role_argument, help="VIEWER, OPERATOR or ADMIN (ROLE_ADMIN, admin also work)"
        )
        parser.add_argument("--name", required=True, help="label shown in listings")
        parser.add_argument("--expires-in-days", type=positive_int, help="expire the key after N days")

    def handle(self, *args, namespace, role, name, expires_in_days, **options):
        expires_at = timezone.now() + timedelta(days=expires_in_days) if expires_in_days else None
        try:
            key, plaintext = issue_api_key(
                actor=Principal.system(), namespace=namespace, name=name, role=role, expires_at=expires_at
            )
        except Error as exc:
            raise CommandError(exc.message) from None
        self.stderr.write(f"Issued {key.key_id} ({role.wire_name} in {namespace}). The key is shown once:")
        self.stdout.write(plaintext)
