from django.core.management.base import BaseCommand

from controlplane.auth import Principal
from controlplane.commands import service_errors
from runners.services import revoke_runner


class Command(BaseCommand):
    help = "Revokes a runner's key and ends its leases (its jobs are queued again or fail)."

    def add_arguments(self, parser):
        parser.add_argument("runner_id")

    def handle(self, *args, runner_id, **options):
        with service_errors():
            runner = revoke_runner(actor=Principal.system(), runner_id=runner_id)
        self.stdout.write(f"Revoked {runner.runner_id} ({runner.name})")
