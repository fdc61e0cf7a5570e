"""The ops commands: happy paths, bad input as CommandError / non-zero exit, and no secrets printed."""

import io
import subprocess
import sys

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apikeys import tokens
from apikeys.models import ApiKey
from audit.models import AuditEvent
from controlplane.auth import Role
from namespaces.models import Namespace
from tests.conftest import ROOT

NS = "containers.api.v1.NamespaceService/"
pytestmark = pytest.mark.django_db


def run(*args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_create_namespace():
    out, _ = run("create_namespace", "team-c")
    assert out == "team-c\n"
    assert Namespace.objects.filter(name="team-c").exists()
    assert AuditEvent.objects.get(action="namespace.create").actor == "system:manage.py"


@pytest.mark.parametrize(("name", "message"), [("Team_C", "DNS label"), ("team-a", "already exists")])
def test_create_namespace_bad_input(namespace, name, message):
    with pytest.raises(CommandError, match=message):
        run("create_namespace", name)


@pytest.mark.parametrize("role", ["ADMIN", "ROLE_ADMIN", "admin", " Role_Admin "])
def test_issue_api_key_prints_only_the_plaintext(namespace, rpc, role):
    out, err = run("issue_api_key", "--namespace", "team-a", "--role", role, "--name", "ops")
    plaintext = out.strip()
    assert out == plaintext + "\n"
    assert tokens.is_well_formed(plaintext)
    key = ApiKey.objects.get()
    assert (key.role, key.digest, key.expires_at) == (Role.ADMIN, tokens.digest(plaintext), None)
    assert key.key_id in err and plaintext not in err
    assert rpc(NS + "GetNamespace", {"namespace": "team-a"}, token=plaintext).status == 200


def test_issue_api_key_with_expiry(namespace):
    run("issue_api_key", "--namespace", "team-a", "--role", "viewer", "--name", "ci", "--expires-in-days", "7")
    key = ApiKey.objects.get()
    assert (key.role, key.state()) == (Role.VIEWER, "active")
    assert (key.expires_at - key.created_at).days in (6, 7)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--namespace", "team-a", "--role", "boss", "--name", "x"], "unknown role 'boss'"),
        (["--namespace", "team-a", "--role", "ADMIN", "--name", "x", "--expires-in-days", "0"], "at least 1"),
        (["--namespace", "team-a", "--role", "ADMIN", "--name", "x", "--expires-in-days", "soon"], "whole number"),
        (["--namespace", "nope", "--role", "ADMIN", "--name", "x"], "namespace 'nope' not found"),
        (["--namespace", "team-a", "--role", "ADMIN", "--name", "  "], "name: is required"),
        (["--role", "ADMIN", "--name", "x"], "--namespace"),
    ],
)
def test_issue_api_key_bad_input(namespace, args, message):
    with pytest.raises(CommandError, match=message):
        run("issue_api_key", *args)
    assert not ApiKey.objects.exists()


def test_list_api_keys_table_without_secrets(namespace, other_namespace, make_key):
    plaintexts = [make_key("team-a", Role.OPERATOR), make_key("team-b", Role.ADMIN)]
    ApiKey.objects.filter(namespace__name="team-b").update(revoked_at="2026-01-01T00:00:00Z")
    out, _ = run("list_api_keys")
    lines = out.splitlines()
    assert lines[0].split() == ["KEY", "ID", "NAME", "NAMESPACE", "ROLE", "KIND", "CREATED", "LAST", "USED", "STATE"]
    assert len(lines) == 3
    for key in ApiKey.objects.all():
        row = next(line for line in lines if line.startswith(key.key_id))
        assert Role(key.role).wire_name in row and key.namespace.name in row and key.state() in row
        assert key.digest not in out
    assert not any(p in out for p in plaintexts)
    assert not any(p[4:12] in out for p in plaintexts)  # not even a fragment of a key

    only_a, _ = run("list_api_keys", "--namespace", "team-a")
    assert len(only_a.splitlines()) == 2 and "team-b" not in only_a


def test_list_api_keys_walks_every_page(namespace, make_key, monkeypatch):
    monkeypatch.setattr("apikeys.management.commands.list_api_keys.PAGE", 2)
    for _ in range(5):
        make_key()
    out, _ = run("list_api_keys")
    assert sorted(line.split()[0] for line in out.splitlines()[1:]) == sorted(
        ApiKey.objects.values_list("key_id", flat=True)
    )


def test_list_api_keys_empty_and_unknown_namespace(namespace):
    out, err = run("list_api_keys")
    assert (out, err) == ("", "No API keys.\n")
    with pytest.raises(CommandError, match="namespace 'nope' not found"):
        run("list_api_keys", "--namespace", "nope")


def test_revoke_api_key(namespace, make_key, rpc):
    plaintext = make_key("team-a", Role.ADMIN)
    key = ApiKey.objects.get()
    out, _ = run("revoke_api_key", key.key_id)
    assert out.startswith(f"{key.key_id} revoked at ")
    assert AuditEvent.objects.get(action="api_key.revoke").target == f"api_key:{key.key_id}"
    result = rpc(NS + "GetNamespace", {"namespace": "team-a"}, token=plaintext)
    assert (result.status, result.code) == (401, "unauthenticated")


def test_revoke_unknown_key():
    with pytest.raises(CommandError, match="not found"):
        run("revoke_api_key", "key_nope")


def test_set_group_bindings_replaces_the_whole_list(namespace):
    run("set_group_bindings", "team-a", "old=viewer")
    out, _ = run("set_group_bindings", "team-a", "eng=OPERATOR", "cn=admins,ou=groups=ROLE_ADMIN")
    assert out.splitlines() == ["cn=admins,ou=groups=ADMIN", "eng=OPERATOR"]
    assert dict(namespace.group_bindings.values_list("oidc_group", "role")) == {
        "eng": Role.OPERATOR,
        "cn=admins,ou=groups": Role.ADMIN,
    }
    assert AuditEvent.objects.filter(action="namespace.update", actor="system:manage.py").count() == 2


def test_set_group_bindings_clear(namespace):
    run("set_group_bindings", "team-a", "eng=viewer")
    out, err = run("set_group_bindings", "team-a", "--clear")
    assert out == "" and "no group bindings" in err
    assert not namespace.group_bindings.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["team-a"], "--clear"),
        (["team-a", "eng=viewer", "--clear"], "--clear takes no"),
        (["team-a", "eng"], "'eng': expected GROUP=ROLE"),
        (["team-a", "=viewer"], "'=viewer': expected GROUP=ROLE"),
        (["team-a", "eng=boss"], "'eng=boss': unknown role 'boss'"),
        (["team-a", "eng=viewer", "eng=admin"], "'eng=admin': duplicate binding"),
        (["nope", "eng=viewer"], "namespace 'nope' not found"),
    ],
)
def test_set_group_bindings_bad_input(namespace, args, message):
    run("set_group_bindings", "team-a", "keep=viewer")
    with pytest.raises(CommandError, match=message):
        run("set_group_bindings", *args)
    assert list(namespace.group_bindings.values_list("oidc_group", flat=True)) == ["keep"]


@pytest.mark.parametrize(
    "argv",
    [
        ["create_namespace", "Bad_Name"],
        ["issue_api_key", "--namespace", "x", "--role", "boss", "--name", "y"],
        ["revoke_api_key"],
        ["set_group_bindings", "team-a", "eng"],
        ["list_api_keys", "--bogus"],
    ],
)
def test_bad_input_exits_non_zero(argv):
    # Checked before any database access, so the (unmigrated) default database is never touched.
    result = subprocess.run([sys.executable, "manage.py", *argv], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert result.stdout == ""
    assert result.stderr.strip()


@pytest.mark.parametrize(
    "command", ["create_namespace", "issue_api_key", "list_api_keys", "revoke_api_key", "set_group_bindings"]
)
def test_help(command):
    with pytest.raises(SystemExit) as exit_info:
        run(command, "--help")
    assert exit_info.value.code == 0
