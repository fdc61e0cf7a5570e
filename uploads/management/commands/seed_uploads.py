import sys
import time
from itertools import islice

from django.core.management.base import BaseCommand
from django.db import connection, transaction
from django.utils import timezone

from uploads.records import rows_from_record
from uploads.services import write_rows
from uploads.synthetic import records

from ._bucket import bucket_argument

BATCH = 20000


class Command(BaseCommand):
    help = "Generates N realistic synthetic uploads in a bucket (batched COPY on PostgreSQL, bounded memory)."

    def add_arguments(self, parser):
        parser.add_argument("--bucket", required=True, help="bucket id or NAMESPACE/NAME")
        parser.add_argument("--count", type=int, required=True)
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args, bucket, count, seed, **options):
        target = bucket_argument(bucket)
        progress = Progress(count)
        now = timezone.now()
        generated = records(count, seed)
        while progress.done < count:
            size = min(BATCH, count - progress.done)
            # One transaction per batch: bounded memory, and a long run shows progress.
            with transaction.atomic():
                rows = (rows_from_record(r, bucket_id=target.pk, now=now) for r in islice(generated, size))
                write_rows(rows, target)
            progress.advance(size)
        progress.finish()
        if connection.vendor == "postgresql":
            # Fresh statistics, or the planner misjudges the child tables' prefetch queries.
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE uploads_upload, uploads_alias, uploads_metaupload")
        self.stdout.write(f"seeded {count} uploads into {target}")


class Progress:
    """A one-line progress bar on stderr (no dependency)."""

    def __init__(self, total: int, width: int = 30):
        self.total, self.width, self.done = max(total, 1), width, 0
        self.started = time.monotonic()

    def advance(self, n: int) -> None:
        self.done += n
        elapsed = time.monotonic() - self.started
        rate = self.done / elapsed if elapsed else 0
        filled = int(self.width * self.done / self.total)
        eta = (self.total - self.done) / rate if rate else 0
        sys.stderr.write(
            f"\r[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total} {rate:,.0f}/s eta {eta:,.0f}s "
        )
        sys.stderr.flush()

    def finish(self) -> None:
        sys.stderr.write(f"\ndone in {time.monotonic() - self.started:,.1f}s\n")
