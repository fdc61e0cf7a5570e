from django.core.management.base import BaseCommand

from controlplane.auth import Principal
from controlplane.commands import service_errors
from namespaces.services import create_namespace


class Command(BaseCommand):
    help = (
        "Creates a namespace and prints its name. Group bindings, targets and quotas are set "
        "afterwards (set_group_bindings, the admin or UpdateNamespace)."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="namespace name: a DNS label (a-z, 0-9 and '-'), e.g. team-a")

    def handle(self, *args, name, **options):
        with service_errors():
            namespace = create_namespace(actor=Principal.system(), name=name)
        self.stdout.write(namespace.name)
