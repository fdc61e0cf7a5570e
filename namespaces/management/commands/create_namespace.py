from django.core.management.base import BaseCommand, CommandError

from controlplane.auth import Principal
from controlplane.rpc import Error
from namespaces.services import create_namespace


class Command(BaseCommand):
    help = "Creates a namespace (a DNS label: a-z, 0-9 and '-')."

    def add_arguments(self, parser):
        parser.add_argument("name", help="namespace name, e.g. team-a")

    def handle(self, *args, name, **options):
        try:
            namespace = create_namespace(actor=Principal.system(), name=name)
        except Error as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(namespace.name)
