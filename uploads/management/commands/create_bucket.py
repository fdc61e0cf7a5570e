from django.core.management.base import BaseCommand

from controlplane.auth import Principal
from controlplane.commands import service_errors
from uploads.services import create_bucket


class Command(BaseCommand):
    help = "Creates a bucket in a namespace and prints its id."

    def add_arguments(self, parser):
        parser.add_argument("--namespace", required=True)
        parser.add_argument("name")

    def handle(self, *args, namespace, name, **options):
        with service_errors():
            bucket = create_bucket(actor=Principal.system(), namespace=namespace, name=name)
        self.stdout.write(str(bucket.pk))
