from django.core.management.base import BaseCommand

from idempotency.services import purge_expired


class Command(BaseCommand):
    help = "Deletes requestId records older than REQUEST_ID_RETENTION_HOURS (run it from cron, e.g. hourly)."

    def handle(self, *args, **options):
        deleted = purge_expired()
        self.stdout.write(f"deleted {deleted} requestId records")
