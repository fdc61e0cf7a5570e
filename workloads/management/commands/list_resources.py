from django.core.management.base import BaseCommand

from controlplane.commands import service_errors
from workloads import selectors
from workloads.models import EgressEvent, EgressGrant, Environment, Job, Sandbox, Workspace

# kind → (model, columns: header → value of a row)
KINDS = {
    "jobs": (Job, {"JOB": "job_id", "STATE": "state", "IMAGE": "image", "CREATED": "created_at"}),
    "sandboxes": (
        Sandbox,
        {"SANDBOX": "sandbox_id", "IMAGE": "image", "WORKSPACE": "workspace", "AGENT KEY": "agent_key"},
    ),
    "environments": (Environment, {"ENVIRONMENT": "environment_id", "NAME": "name", "STATE": "state"}),
    "workspaces": (Workspace, {"WORKSPACE": "workspace_id", "NAME": "name", "CREATED": "created_at"}),
    "egress-grants": (EgressGrant, {"GRANT": "grant_id", "TARGET": "target", "KIND": "kind"}),
    "egress-events": (EgressEvent, {"AT": "at", "KIND": "kind", "TARGET": "target", "SANDBOX": "sandbox_id"}),
}
PAGE = 500


class Command(BaseCommand):
    help = "Lists a namespace's jobs, sandboxes, environments, workspaces and egress grants and events."

    def add_arguments(self, parser):
        parser.add_argument("--namespace", required=True)
        parser.add_argument("--kind", choices=sorted(KINDS), action="append", help="repeatable; default: all")

    def handle(self, *args, namespace, kind, **options):
        for name in kind or KINDS:
            model, columns = KINDS[name]
            self.stdout.write(f"# {name}")
            self.stdout.write("\t".join(columns))
            with service_errors():
                for row in _all_rows(model, namespace):
                    self.stdout.write("\t".join(_text(getattr(row, attr)) for attr in columns.values()))


def _all_rows(model, namespace):
    after = None
    while True:
        rows = selectors.page(model, namespace=namespace, after=after, limit=PAGE)
        yield from rows
        if len(rows) < PAGE:
            return
        after = rows[-1].pk


def _text(value) -> str:
    if value is None:
        return "-"
    if hasattr(value, "isoformat"):
        return value.isoformat(timespec="seconds")
    return getattr(value, "workspace_id", None) or getattr(value, "key_id", None) or str(value)
