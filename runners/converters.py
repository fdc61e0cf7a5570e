from containers.api.v1 import runner_admin_pb2 as pb
from namespaces.converters import timestamp

from .models import Runner


def runner_to_proto(runner: Runner, work_held: int = 0) -> pb.Runner:
    return pb.Runner(
        runner_id=runner.runner_id,
        name=runner.name,
        namespaces=runner.namespaces,
        create_time=timestamp(runner.created_at),
        last_seen_time=timestamp(runner.last_seen_at),
        state=pb.RUNNER_STATE_REVOKED if runner.revoked else pb.RUNNER_STATE_ACTIVE,
        work_held=work_held,
        version=runner.version,
        key_id=runner.key.key_id,
        key_hint=runner.key.hint,
        created_by=runner.created_by,
    )
