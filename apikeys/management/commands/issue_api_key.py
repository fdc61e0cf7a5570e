from datetime import timedelta

from django.core.management.base import BaseCommand
from django.utils import timezone

from apikeys.services import issue_api_key
from controlplane.auth import Principal
from controlplane.commands import ROLE_HELP, positive_int, role_argument, service_errors


class Command(BaseCommand):
    help = (
        "Issues an API key and prints its plaintext alone on stdout, once (details go to stderr). "
        "Store it then: it cannot be shown again."
    )

    def add_arguments(self, parser):
        parser.add_argument("--namespace", required=True, help="namespace the key acts in")
        parser.add_argument("--role", required=True, type=role_argument, help=ROLE_HELP)
        parser.add_argument("--name", required=True, help="label shown in listings")
        parser.add_argument("--expires-in-days", type=positive_int, metavar="N", help="expire the key after N days")

    def handle(self, *args, namespace, role, name, expires_in_days, **options):
        expires_at = timezone.now() + timedelta(days=expires_in_days) if expires_in_days else None
        with service_errors():
            key, plaintext = issue_api_key(
                actor=Principal.system(), namespace=namespace, name=name, role=role, expires_at=expires_at
            )
        expiry = f", expires {key.expires_at:%Y-%m-%d %H:%M} UTC" if key.expires_at else ""
        self.stderr.write(f"Issued {key.key_id} ({role.wire_name} in {namespace}{expiry}). The key is shown once:")
        self.stdout.write(plaintext)
