from containers.api.v1 import runner_admin_pb2 as pb
from namespaces.converters import timestamp

from .models import Runner


def runner_to_proto(runner: Runner) -> pb.Runner:
    """`runner` annotated with work_held (selectors.with_work_held); a fresh one holds none."""
    return pb.Runner(
        runner_id=runner.runner_id,
        name=runner.name,
        namespaces=runner.namespaces,
        create_time=timestamp(runner.created_at),
        last_seen_time=timestamp(runner.last_seen_at),
        state=pb.RUNNER_STATE_REVOKED if runner.revoked else pb.RUNNER_STATE_ACTIVE,
        work_held=getattr(runner, "work_held", 0),
        version=runner.version,
        key_id=runner.key.key_id,
        key_hint=runner.key.hint,
        created_by=runner.created_by,
    )
