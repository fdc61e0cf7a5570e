from django.core.management.base import BaseCommand

from controlplane.auth import Principal
from workloads.services.leases import reap_expired


class Command(BaseCommand):
    help = (
        "Ends leases that were not renewed in time (jobs queued again or failed, sandboxes failed). "
        "AcquireWork does this too; run it from cron where runners may all be gone."
    )

    def handle(self, *args, **options):
        total = 0
        while lost := reap_expired(principal=Principal.system("reap_leases")):
            total += lost
        self.stdout.write(f"{total} lease(s) ended")
