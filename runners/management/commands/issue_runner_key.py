from django.core.management.base import BaseCommand

from controlplane.auth import Principal
from controlplane.commands import service_errors
from runners.services import issue_runner


class Command(BaseCommand):
    help = (
        "Issues a runner and prints its key's plaintext alone on stdout, once (details go to stderr). "
        "Give it to cprunner (CP_RUNNER_KEY): it cannot be shown again."
    )

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True, help="label shown in listings")
        parser.add_argument(
            "--namespace", action="append", default=[], dest="namespaces", help="serve only this namespace (repeatable)"
        )

    def handle(self, *args, name, namespaces, **options):
        with service_errors():
            runner, plaintext = issue_runner(actor=Principal.system(), name=name, namespaces=namespaces)
        serves = ", ".join(runner.namespaces) or "every namespace"
        self.stderr.write(f"Issued {runner.runner_id} ({serves}). The key is shown once:")
        self.stdout.write(plaintext)
