from __future__ import annotations

from django.conf import settings
from django.db import transaction

from audit.services import record
from controlplane.auth import Principal
from controlplane.errors import Error
from namespaces.validation import validate_namespace_name

from .. import selectors
from ..ids import new_id
from ..models import Environment
from . import signal
from .common import enforce_quota, idempotent_create, lock_namespace, validate_image


@transaction.atomic
@idempotent_create("RegisterEnvironment", Environment)
def register_environment(*, actor: Principal, namespace: str, name: str, image: str) -> Environment:
    validate_namespace_name(name, "name")
    image = validate_image(image)
    ns = lock_namespace(namespace)
    if Environment.objects.filter(namespace=ns, name=name).exists():
        raise Error.already_exists(f"environment {name!r} already exists in namespace {ns.name!r}")
    enforce_quota(ns, "max_environments", Environment.objects.filter(namespace=ns))
    environment = Environment.objects.create(
        environment_id=new_id("env"), namespace=ns, name=name, image=image, created_by=actor.describe()
    )
    record(
        actor=actor,
        action="environment.register",
        target=f"environment:{environment.environment_id}",
        namespace=ns.name,
        changes={"name": name, "image": image},
    )
    return environment


@transaction.atomic
def build_environment(*, actor: Principal, environment_id: str) -> Environment:
    """Queues a build: a runner resolves the image, then the environment is READY with its
    digest, or FAILED with a reason (workloads.services.leases)."""
    if not settings.CONTAINERS_BUILDS_ENABLED:
        raise Error.unimplemented(
            "building environments is not available in this deployment (CONTAINERS_BUILDS_ENABLED)"
        )
    environment = selectors.get(Environment, environment_id, for_update=True)
    if environment.state == Environment.State.BUILDING:
        raise Error.failed_precondition(f"environment {environment_id!r} is already building")
    environment.state = Environment.State.BUILDING
    environment.attempt, environment.result, environment.reason, environment.image_digest = 0, "", "", ""
    environment.save(update_fields=["state", "attempt", "result", "reason", "image_digest", "updated_at"])
    signal.announce()
    record(
        actor=actor,
        action="environment.build",
        target=f"environment:{environment_id}",
        namespace=environment.namespace.name,
    )
    return environment
