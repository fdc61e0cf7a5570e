import sys

from django.core.management.base import BaseCommand, CommandError
from django.db import IntegrityError

from controlplane.auth import Principal
from uploads.services import ImportFailed, import_uploads

from ._bucket import bucket_argument


class Command(BaseCommand):
    help = "Imports JSON Lines of upload records (ListUploads' record shape) into a bucket, all or nothing."

    def add_arguments(self, parser):
        parser.add_argument("--bucket", required=True, help="bucket id or NAMESPACE/NAME")
        parser.add_argument("file", help="JSON Lines file, '-' for stdin")

    def handle(self, *args, bucket, file, **options):
        target = bucket_argument(bucket)
        try:
            # Bytes: orjson decodes and checks UTF-8 itself, so a bad byte names its line.
            if file == "-":
                count = import_uploads(actor=Principal.system(), bucket=target, lines=sys.stdin.buffer)
            else:
                with open(file, "rb") as lines:
                    count = import_uploads(actor=Principal.system(), bucket=target, lines=lines)
        except ImportFailed as exc:
            raise CommandError(f"{file}: {exc}; nothing was imported") from None
        except IntegrityError as exc:
            # Ids that clash across write batches, caught by the database's own constraints.
            raise CommandError(f"{file}: conflicting ids ({exc}); nothing was imported") from None
        except OSError as exc:
            raise CommandError(f"{file}: {exc}") from None
        self.stdout.write(f"imported {count} uploads into {target}")
