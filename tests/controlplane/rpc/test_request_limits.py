"""Every string of every request message declares a maximum (controlplane.limits in proto/),
and one character more is invalid_argument naming the field, before any database access.

The cases are generated from the descriptors of every registered procedure: a new field or
method joins them by itself, and fails the first test until it declares its limit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from google.protobuf import descriptor_pool, json_format, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from apikeys.models import ApiKey
from controlplane.errors import Error
from controlplane.rpc.registry import registry
from controlplane.rpc.validation import limits_of
from namespaces.models import GroupBinding, ImagePullSecret, InternalTarget, Namespace
from namespaces.services import PullSecret, Target, create_namespace
from tests.conftest import SYSTEM
from uploads.models import Bucket
from workloads.models import EgressGrant, Environment, Job, Sandbox, Workspace

pytestmark = pytest.mark.django_db

PROCEDURES = sorted(registry.methods)


@dataclass(frozen=True)
class Case:
    path: str  # the field in JSON form, as the error must name it
    limit: int  # 0: none declared
    fill: Callable  # fill(message, n): makes the field n characters (or items) long


def _string_cases(descriptor: Descriptor, prefix: str = "", reach=lambda m: m) -> Iterator[Case]:
    """One case per string a request can carry: nested messages, list items ([0]), map keys and values."""
    for field in descriptor.fields:
        name, limits = prefix + field.json_name, limits_of(field)
        own = lambda m, f=field, reach=reach: getattr(reach(m), f.name)  # noqa: E731
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            yield Case(name, limits.max_key_length, lambda m, n, own=own: own(m).__setitem__("k" * n, "v"))
            yield Case(f"{name}['K']", limits.max_length, lambda m, n, own=own: own(m).__setitem__("K", "v" * n))
        elif field.message_type is not None and field.message_type.full_name == "google.protobuf.FieldMask":
            yield Case(name, limits.max_length, lambda m, n, own=own: own(m).paths.append("p" * n))
        elif field.message_type is not None and field.message_type.full_name.startswith("google.protobuf."):
            continue  # Timestamp: no strings
        elif field.message_type is not None:
            if field.is_repeated:
                item = lambda m, own=own: own(m)[0] if len(own(m)) else own(m).add()  # noqa: E731
                yield from _string_cases(field.message_type, f"{name}[0].", item)
            else:
                yield from _string_cases(field.message_type, f"{name}.", own)
        elif field.type == FieldDescriptor.TYPE_STRING:
            if field.is_repeated:
                yield Case(f"{name}[0]", limits.max_length, lambda m, n, own=own: own(m).append("x" * n))
            else:
                yield Case(name, limits.max_length, lambda m, n, f=field, r=reach: setattr(r(m), f.name, "x" * n))


def _item_cases(descriptor: Descriptor, prefix: str = "", reach=lambda m: m) -> Iterator[Case]:
    """One case per list, map or FieldMask with a declared max_items, nested messages included."""
    for field in descriptor.fields:
        name, limits = prefix + field.json_name, limits_of(field)
        own = lambda m, f=field, reach=reach: getattr(reach(m), f.name)  # noqa: E731
        message = field.message_type
        if message is not None and message.GetOptions().map_entry:
            fill = lambda m, n, own=own: own(m).update({f"k{i}": "v" for i in range(n)})  # noqa: E731
        elif message is not None and message.full_name == "google.protobuf.FieldMask":
            fill = lambda m, n, own=own: own(m).paths.extend(["groups"] * n)  # noqa: E731
        elif field.is_repeated and message is not None:
            fill = lambda m, n, own=own: [own(m).add() for _ in range(n)]  # noqa: E731
        elif field.is_repeated:
            fill = lambda m, n, own=own, f=field: own(m).extend([1 if f.type != f.TYPE_STRING else "x"] * n)  # noqa: E731
        else:
            if message is not None and not message.full_name.startswith("google.protobuf."):
                yield from _item_cases(message, f"{name}.", own)
            continue
        if limits.max_items:
            yield Case(name, limits.max_items, fill)
        if field.is_repeated and message is not None and not message.GetOptions().map_entry:
            item = lambda m, own=own: own(m)[0] if len(own(m)) else own(m).add()  # noqa: E731
            yield from _item_cases(message, f"{name}[0].", item)


def _cases(kind) -> list:
    return [
        pytest.param(procedure, case, id=f"{procedure.rsplit('.', 1)[-1]}:{case.path}")
        for procedure in PROCEDURES
        for case in kind(registry.methods[procedure].input_type)
    ]


STRING_CASES = _cases(_string_cases)
ITEM_CASES = _cases(_item_cases)


def test_every_request_string_declares_a_maximum():
    assert len(STRING_CASES) > 60
    missing = [param.id for param in STRING_CASES if not param.values[1].limit]
    assert not missing, f"declare (controlplane.limits) max_length/max_key_length on: {missing}"


def _send(rpc, admin_key, procedure: str, case: Case, size: int, codec: str):
    message = message_factory.GetMessageClass(registry.methods[procedure].input_type)()
    case.fill(message, size)
    if codec == "proto":
        return rpc(procedure, data=message.SerializeToString(), content_type="application/proto", token=admin_key)
    return rpc(procedure, data=json_format.MessageToJson(message).encode(), token=admin_key)


def _assert_names_field_and_limit(result, case: Case) -> None:
    assert result.code == "invalid_argument", result
    assert result.body["details"][0]["debug"]["fieldViolations"][0]["field"] == case.path, result
    assert str(case.limit) in result.body["message"], result


@pytest.mark.parametrize("codec", ["json", "proto"])
@pytest.mark.parametrize("procedure, case", STRING_CASES)
def test_one_character_too_many_is_invalid_argument_naming_the_field(rpc, admin_key, procedure, case, codec):
    with CaptureQueriesContext(connection) as queries:
        result = _send(rpc, admin_key, procedure, case, case.limit + 1, codec)
    _assert_names_field_and_limit(result, case)
    # Refused before the database: only the API key lookup of authentication ran.
    assert len(queries) <= 2, [q["sql"] for q in queries]


@pytest.mark.parametrize("procedure, case", ITEM_CASES)
def test_one_item_too_many_is_invalid_argument_naming_the_field(rpc, admin_key, procedure, case):
    _assert_names_field_and_limit(_send(rpc, admin_key, procedure, case, case.limit + 1, "proto"), case)


@pytest.mark.parametrize("procedure, case", STRING_CASES)
def test_exactly_the_maximum_passes_the_check_and_never_breaks_the_database(rpc, admin_key, procedure, case):
    # On PostgreSQL a limit above its column would surface here as a 500 (DataError).
    result = _send(rpc, admin_key, procedure, case, case.limit, "proto")
    assert result.status != 500, result
    violations = (result.body or {}).get("details", [{}])[0].get("debug", {}).get("fieldViolations", [])
    assert not any("characters, got" in v["description"] for v in violations), result


@pytest.mark.parametrize(
    "message, field, column",
    [
        ("containers.api.v1.CreateNamespaceRequest", "namespace", Namespace._meta.get_field("name")),
        ("containers.api.v1.GroupBinding", "oidc_group", GroupBinding._meta.get_field("oidc_group")),
        ("containers.api.v1.InternalTarget", "name", InternalTarget._meta.get_field("name")),
        ("containers.api.v1.InternalTarget", "host", InternalTarget._meta.get_field("host")),
        ("containers.api.v1.ImagePullSecret", "registry", ImagePullSecret._meta.get_field("registry")),
        ("containers.api.v1.ImagePullSecret", "secret_ref", ImagePullSecret._meta.get_field("secret_ref")),
        ("containers.api.v1.IssueApiKeyRequest", "name", ApiKey._meta.get_field("name")),
        ("containers.api.v1.RevokeApiKeyRequest", "key_id", ApiKey._meta.get_field("key_id")),
        ("containers.api.v1.RunJobRequest", "image", Job._meta.get_field("image")),
        ("containers.api.v1.GetJobRequest", "job_id", Job._meta.get_field("job_id")),
        ("containers.api.v1.CreateSandboxRequest", "image", Sandbox._meta.get_field("image")),
        ("containers.api.v1.GetSandboxRequest", "sandbox_id", Sandbox._meta.get_field("sandbox_id")),
        ("containers.api.v1.RegisterEnvironmentRequest", "name", Environment._meta.get_field("name")),
        ("containers.api.v1.RegisterEnvironmentRequest", "image", Environment._meta.get_field("image")),
        ("containers.api.v1.CreateWorkspaceRequest", "name", Workspace._meta.get_field("name")),
        ("containers.api.v1.GrantEgressRequest", "target", EgressGrant._meta.get_field("target")),
        ("uploads.api.v1.BucketRef", "name", Bucket._meta.get_field("name")),
    ],
)
def test_limits_match_the_database_columns(message, field, column):
    descriptor = descriptor_pool.Default().FindMessageTypeByName(message)
    assert limits_of(descriptor.fields_by_name[field]).max_length == column.max_length


@pytest.mark.parametrize(
    "target, secret, field",
    [
        (Target("db", "fe80::1%" + "e" * 300), None, "internalTargets[0].host"),
        (None, PullSecret("r" * 200 + ".io:5000/" + "p" * 200, "vault://kv/x"), "imagePullSecrets[0].registry"),
    ],
)
def test_services_refuse_what_their_columns_cannot_hold(target, secret, field):
    # The console and manage.py call the services directly, without the RPC layer's check.
    with pytest.raises(Error) as caught:
        create_namespace(
            actor=SYSTEM,
            name="team-z",
            internal_targets=[target] if target else [],
            image_pull_secrets=[secret] if secret else [],
        )
    assert caught.value.code.wire_name == "invalid_argument"
    assert caught.value.message.startswith(f"{field}: ")
    assert not Namespace.objects.filter(name="team-z").exists()
