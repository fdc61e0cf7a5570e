from django.core.management.base import BaseCommand

from runners import selectors


class Command(BaseCommand):
    help = "Lists runners, newest first: id, state, last seen, work held, namespaces, name."

    def handle(self, *args, **options):
        after = None
        while page := selectors.page(after=after, limit=500):
            for runner in page:
                seen = f"{runner.last_seen_at:%Y-%m-%d %H:%M:%S}" if runner.last_seen_at else "never"
                state = "revoked" if runner.revoked else "active"
                namespaces = ",".join(runner.namespaces) or "*"
                self.stdout.write(
                    f"{runner.runner_id}\t{state}\t{seen}\t{runner.work_held}\t{namespaces}\t{runner.name}"
                )
            after = selectors.position_of(page[-1])
