from django.core.management.base import BaseCommand

from apikeys.selectors import list_api_keys
from controlplane.auth import Role
from controlplane.commands import service_errors

COLUMNS = ("KEY ID", "NAME", "NAMESPACE", "ROLE", "KIND", "CREATED", "LAST USED", "STATE")
PAGE = 500


class Command(BaseCommand):
    help = "Lists API keys, newest first: key id, name, namespace, role, kind, created, last used and state."

    def add_arguments(self, parser):
        parser.add_argument("--namespace", metavar="NS", default="", help="only the keys of this namespace")

    def handle(self, *args, namespace, **options):
        rows = [COLUMNS]
        rows += [_row(key) for key in _all_keys(namespace)]
        if len(rows) == 1:
            self.stderr.write("No API keys.")
            return
        widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
        for row in rows:
            self.stdout.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


def _all_keys(namespace: str):
    after = None
    while True:
        with service_errors():
            page = list_api_keys(namespace=namespace, after=after, limit=PAGE)
        yield from page
        if len(page) < PAGE:
            return
        after = (page[-1].created_at, page[-1].pk)


def _row(key) -> tuple[str, ...]:
    # Only the key's public fields: the digest and hint are never printed.
    return (
        key.key_id,
        key.name,
        key.namespace.name,
        Role(key.role).wire_name,
        key.kind,
        _time(key.created_at),
        _time(key.last_used_at),
        key.state(),
    )


def _time(value) -> str:
    return f"{value:%Y-%m-%d %H:%M}" if value else "never"
