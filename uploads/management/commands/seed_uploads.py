import sys
import time

from django.core.management.base import BaseCommand, CommandError
from django.db import IntegrityError

from controlplane.auth import Principal
from controlplane.errors import Error
from uploads.services import seed_uploads
from uploads.write.writer import refresh_statistics

from ._bucket import bucket_argument


class Command(BaseCommand):
    help = "Generates N realistic synthetic uploads in a bucket (batched COPY on PostgreSQL, bounded memory)."

    def add_arguments(self, parser):
        parser.add_argument("--bucket", required=True, help="bucket id or NAMESPACE/NAME")
        parser.add_argument("--count", type=int, required=True)
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args, bucket, count, seed, **options):
        target = bucket_argument(bucket)
        progress = Progress(count)
        try:
            seed_uploads(actor=Principal.system(), bucket=target, count=count, seed=seed, progress=progress.advance)
        except Error as exc:
            raise CommandError(exc.message) from None
        except IntegrityError:
            # uploadIds are a function of the seed, and unique platform-wide.
            raise CommandError(f"uploads of --seed {seed} already exist; seed with another --seed") from None
        progress.finish()
        refresh_statistics()  # row counts and facet frequencies now, not at autovacuum's next round
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
