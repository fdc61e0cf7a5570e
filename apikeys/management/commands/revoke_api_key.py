from django.core.management.base import BaseCommand

from apikeys.services import revoke_api_key
from controlplane.auth import Principal
from controlplane.commands import service_errors


class Command(BaseCommand):
    help = "Revokes an API key by its key id (see list_api_keys). Later use of the key is unauthenticated."

    def add_arguments(self, parser):
        parser.add_argument("key_id", metavar="KEY_ID", help="the key's id, e.g. key_3kTMd9Xq2Lb7Wc1R")

    def handle(self, *args, key_id, **options):
        with service_errors():
            key = revoke_api_key(actor=Principal.system(), key_id=key_id)
        self.stdout.write(f"{key.key_id} revoked at {key.revoked_at:%Y-%m-%d %H:%M:%S} UTC")
