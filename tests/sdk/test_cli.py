"""cpctl as a subprocess against a real gunicorn: every command, its output and exit code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cpsdk import AdminClient

from controlplane.auth import Role
from tests.support.uploads_factory import add, make_bucket, record, string_kv

pytestmark = pytest.mark.e2e

CPCTL = str(Path(sys.executable).parent / "cpctl")


@pytest.fixture
def cpctl(sdk_service, transactional_db, namespace, make_key, tmp_path):
    keys = {role: make_key("team-a", role) for role in Role}
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("CP_")}
    base_env.update(CP_BASE_URL=sdk_service.url, XDG_CONFIG_HOME=str(tmp_path / "config"))

    def run(*args: str, role: Role | None = Role.OPERATOR, expect: int = 0):
        env = dict(base_env)
        if role is not None:
            env["CP_API_KEY"] = keys[role]
        result = subprocess.run([CPCTL, *args], env=env, capture_output=True, text=True, timeout=60)
        assert result.returncode == expect, (args, result.returncode, result.stdout, result.stderr)
        return result

    run.keys = keys
    run.url = sdk_service.url
    return run


def lines(result) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def table(result) -> list[list[str]]:
    return [line.split() for line in result.stdout.splitlines()]


def test_whoami(cpctl):
    out = cpctl("whoami").stdout
    assert "Kind        api_key" in out
    assert "Namespaces  team-a=operator" in out
    assert "Admin       no" in out
    me = json.loads(cpctl("whoami", "--json").stdout)
    assert me["namespaces"] == [{"namespace": "team-a", "role": "ROLE_OPERATOR"}]


def test_jobs(cpctl):
    job = json.loads(cpctl("jobs", "run", "busybox:1.36", "--env", "A=1", "--json", "--", "echo", "--json").stdout)
    assert job["command"] == ["echo", "--json"]  # after `--` everything is the job's command
    assert job["env"] == {"A": "1"}
    shown = cpctl("jobs", "get", job["jobId"]).stdout
    assert f"Job         {job['jobId']}" in shown and "State       queued" in shown
    rows = table(cpctl("jobs", "ls"))
    assert rows[0] == ["JOB", "STATE", "IMAGE", "COMMAND", "AGE"]
    assert rows[1][:5] == [job["jobId"], "queued", "busybox:1.36", "echo", "--json"]
    assert "State       cancelled" in cpctl("jobs", "cancel", job["jobId"]).stdout
    spaced = json.loads(cpctl("jobs", "run", "busybox:1.36", "-o", "json", "--", "sh", "-c", "echo hi; sleep 5").stdout)
    assert "sh -c 'echo hi; sleep 5'" in cpctl("jobs", "get", spaced["jobId"]).stdout  # shlex.join: reads back
    assert "jobId: " + spaced["jobId"] in cpctl("jobs", "get", spaced["jobId"], "-o", "yaml").stdout
    assert cpctl("jobs", "ls", "-o", "wide").stdout.splitlines()[0].split()[-3:] == ["UPDATED", "CREATED", "BY"]
    cpctl("jobs", "cancel", spaced["jobId"])
    assert [j["state"] for j in lines(cpctl("jobs", "ls", "--json"))] == ["JOB_STATE_CANCELLED"] * 2


def test_sandboxes_workspaces_environments(cpctl):
    workspace = json.loads(cpctl("workspaces", "create", "scratch", "--json").stdout)
    assert table(cpctl("workspaces", "ls"))[1][:2] == [workspace["workspaceId"], "scratch"]
    assert "scratch" in cpctl("workspaces", "get", workspace["workspaceId"]).stdout

    sandbox = json.loads(
        cpctl("sandboxes", "create", "python:3.12", "--workspace", workspace["workspaceId"], "--json").stdout
    )
    assert sandbox["workspaceId"] == workspace["workspaceId"]
    assert [s["sandboxId"] for s in lines(cpctl("sandboxes", "ls", "--json"))] == [sandbox["sandboxId"]]
    assert "python:3.12" in cpctl("sandboxes", "get", sandbox["sandboxId"]).stdout
    assert cpctl("sandboxes", "preview-url", sandbox["sandboxId"]).stdout.startswith("https://sbx-")
    assert json.loads(cpctl("sandboxes", "app-key", sandbox["sandboxId"], "--json").stdout)["value"]
    assert cpctl("sandboxes", "delete", sandbox["sandboxId"]).stdout == ""
    assert cpctl("workspaces", "delete", workspace["workspaceId"]).stdout == ""
    missing = cpctl("workspaces", "get", workspace["workspaceId"], expect=6)
    assert missing.stderr.startswith("cpctl: not_found:")

    environment = json.loads(cpctl("environments", "register", "py", "python:3.12", "--json").stdout)
    assert table(cpctl("environments", "ls"))[1][:3] == [environment["environmentId"], "py", "python:3.12"]
    assert "py" in cpctl("environments", "get", environment["environmentId"]).stdout
    assert environment["environmentId"] in cpctl("environments", "build", environment["environmentId"]).stdout


def test_egress(cpctl):
    grant = json.loads(cpctl("egress", "grant", "api.example.com:443", "--json").stdout)
    assert table(cpctl("egress", "ls"))[1][:2] == [grant["grantId"], "api.example.com:443"]
    assert cpctl("egress", "revoke", grant["grantId"]).stdout == ""
    assert cpctl("egress", "ls", "--json").stdout == ""
    events = lines(cpctl("egress", "events", "--json"))
    assert [e["kind"] for e in events] == ["EGRESS_EVENT_KIND_REVOKED", "EGRESS_EVENT_KIND_GRANTED"]
    failed = cpctl("egress", "grant", "nosuchtarget", expect=3)  # a bare name must be a registered target
    assert "target" in failed.stderr


def test_uploads_ls_streams_pages_with_filters(cpctl):
    bucket = make_bucket("team-a", "docs")
    add(bucket, [record(n, tags=["finance"], metadataKvs=[string_kv("status", "final")]) for n in range(1, 8)])
    args = ["uploads", "ls", "team-a/docs", "--tag", "finance", "--slug", "FILE", "--meta", "status=final"]
    rows = table(cpctl(*args, "--sort", "size_bytes", "--asc", "--limit", "5", "--page-size", "2"))
    assert rows[0] == ["UPLOAD", "PATH", "SLUG", "SIZE", "AGE"]
    assert [r[0] for r in rows[1:]] == ["u0001", "u0002", "u0003", "u0004", "u0005"]
    newest = lines(cpctl(*args, "--limit", "2", "--json", "--namespace", "team-a"))
    assert [u["uploadId"] for u in newest] == ["u0007", "u0006"]
    assert cpctl("uploads", "ls", "team-a/docs", "--meta", "status:=maybe", expect=2).stderr.startswith("cpctl: --meta")
    too_many = cpctl("uploads", "ls", "docs", *[f"--meta=k{n}=v" for n in range(17)], expect=3)
    assert "field metadataFilters:" in too_many.stderr


def test_admin_namespaces_and_keys(cpctl):
    created = cpctl("admin", "ns", "create", "team-c", "--bind", "devs=operator", role=Role.ADMIN).stdout
    assert "team-c" in created
    ns = json.loads(cpctl("admin", "ns", "get", "team-c", "--json", role=Role.ADMIN).stdout)
    assert ns["groups"] == [{"oidcGroup": "devs", "role": "ROLE_OPERATOR"}]
    assert [r[0] for r in table(cpctl("admin", "ns", "ls", "--page-size", "1", role=Role.ADMIN))[1:]] == [
        "team-a",
        "team-c",
    ]
    bound = json.loads(
        cpctl(
            "admin", "ns", "bindings", "set", "team-c", "ops=VIEWER", "cn=x,ou=y=ADMIN", "--json", role=Role.ADMIN
        ).stdout
    )
    assert sorted(bound["groups"], key=lambda g: g["oidcGroup"]) == [
        {"oidcGroup": "cn=x,ou=y", "role": "ROLE_ADMIN"},
        {"oidcGroup": "ops", "role": "ROLE_VIEWER"},
    ]
    cleared = json.loads(cpctl("admin", "ns", "bindings", "set", "team-c", "--clear", "--json", role=Role.ADMIN).stdout)
    assert "groups" not in cleared
    assert "--clear" in cpctl("admin", "ns", "bindings", "set", "team-c", role=Role.ADMIN, expect=2).stderr

    issued = cpctl("admin", "keys", "issue", "team-c", "--name", "ci", "--role", "viewer", role=Role.ADMIN)
    plaintext = issued.stdout.strip()
    assert plaintext.startswith("cpk_") and "\n" not in plaintext and "shown once" in issued.stderr
    keys = lines(cpctl("admin", "keys", "ls", "team-c", "--json", role=Role.ADMIN))
    assert [k["role"] for k in keys] == ["ROLE_VIEWER"]
    assert plaintext not in json.dumps(keys)
    assert cpctl("admin", "keys", "revoke", keys[0]["keyId"], role=Role.ADMIN).stdout == ""
    assert table(cpctl("admin", "keys", "ls", "team-c", role=Role.ADMIN))[1][4] == "revoked"
    assert (
        "--role"
        in cpctl("admin", "keys", "issue", "team-c", "--name", "x", "--role", "boss", role=Role.ADMIN, expect=2).stderr
    )


def test_admin_runners(cpctl):
    issued = cpctl("admin", "runners", "issue", "build-host-7", "--namespace", "team-a", role=Role.ADMIN)
    plaintext = issued.stdout.strip()
    assert plaintext.startswith("cpk_") and "\n" not in plaintext and "shown once" in issued.stderr
    (runner,) = lines(cpctl("admin", "runners", "ls", "--json", role=Role.ADMIN))
    assert (runner["name"], runner["namespaces"], runner["state"]) == (
        "build-host-7",
        ["team-a"],
        "RUNNER_STATE_ACTIVE",
    )
    assert plaintext not in json.dumps(runner) and plaintext.endswith(runner["keyHint"][-4:])
    everywhere = json.loads(cpctl("admin", "runners", "issue", "spare", "-o", "json", role=Role.ADMIN).stdout)
    assert everywhere["plaintext"].startswith("cpk_") and "namespaces" not in everywhere["runner"]
    listed = table(cpctl("admin", "runners", "ls", role=Role.ADMIN))
    assert listed[0] == ["RUNNER", "NAME", "NAMESPACES", "STATE", "WORK", "LAST", "SEEN", "AGE"]
    assert [row[1:5] for row in listed[1:]] == [
        ["spare", "all", "active", "0"],
        ["build-host-7", "team-a", "active", "0"],
    ]
    revoked = json.loads(cpctl("admin", "runners", "revoke", runner["runnerId"], "--json", role=Role.ADMIN).stdout)
    assert (revoked["runnerId"], revoked["state"]) == (runner["runnerId"], "RUNNER_STATE_REVOKED")
    assert table(cpctl("admin", "runners", "ls", role=Role.ADMIN))[2][3] == "revoked"
    assert cpctl("admin", "runners", "ls", expect=5).stderr.startswith("cpctl: permission_denied")  # not an admin
    assert cpctl("admin", "runners", "revoke", "rnr_doesnotexist0000000", role=Role.ADMIN, expect=6).stderr.startswith(
        "cpctl: not_found"
    )


def test_exit_codes_follow_the_error_class(cpctl):
    denied = cpctl("jobs", "run", "busybox:1.36", "--", "true", role=Role.VIEWER, expect=5)
    assert denied.stderr.startswith("cpctl: permission_denied:") and "ROLE_OPERATOR" in denied.stderr
    assert cpctl("admin", "ns", "get", "team-a", expect=5).stderr.startswith("cpctl: permission_denied")
    assert cpctl("jobs", "get", "job_doesnotexist0000000", expect=6).stderr.startswith("cpctl: not_found")
    bad = cpctl("admin", "ns", "create", "Bad_Name", role=Role.ADMIN, expect=3)
    assert "field namespace:" in bad.stderr
    assert cpctl("admin", "ns", "create", "team-a", role=Role.ADMIN, expect=7).stderr.startswith(
        "cpctl: already_exists"
    )
    unauthenticated = cpctl("whoami", "--api-key", "cpk_" + "x" * 36, role=None, expect=4)
    assert unauthenticated.stderr.startswith("cpctl: unauthenticated")
    assert "cpctl login" in cpctl("whoami", role=None, expect=4).stderr  # no key, never signed in
    assert "--env" in cpctl("jobs", "run", "busybox", "--env", "novalue", expect=2).stderr
    assert cpctl("jobs", "ls", "--base-url", "http://127.0.0.1:9", "--timeout", "2", expect=9).stderr.startswith(
        "cpctl: unavailable"
    )


def test_quota_exit_code_and_detail(cpctl):
    with AdminClient(cpctl.url, cpctl.keys[Role.ADMIN]) as admin:
        admin.update_namespace("team-a", quotas={"max_workspaces": 1})
    cpctl("workspaces", "create", "one")
    full = cpctl("workspaces", "create", "two", expect=8)
    assert full.stderr.startswith("cpctl: resource_exhausted:")
    assert "quota namespace:team-a/maxWorkspaces:" in full.stderr


def test_contexts_hold_base_url_namespace_and_credential(cpctl, tmp_path):
    # No CP_* at all: the context supplies the address and the key (read from stdin, never argv).
    env = {k: v for k, v in os.environ.items() if not k.startswith("CP_")}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")

    def run(*args, stdin=None, expect=0):
        result = subprocess.run([CPCTL, *args], env=env, input=stdin, capture_output=True, text=True, timeout=60)
        assert result.returncode == expect, (args, result.stdout, result.stderr)
        return result

    run(
        "config", "set-context", "dev", "--base-url", cpctl.url, "--api-key-stdin", stdin=cpctl.keys[Role.VIEWER] + "\n"
    )
    run(
        "config",
        "set-context",
        "ops",
        "--base-url",
        cpctl.url,
        "--namespace",
        "team-a",
        "--api-key-stdin",
        stdin=cpctl.keys[Role.ADMIN],
    )
    assert run("config", "current-context").stdout == "dev\n"  # the first context becomes current
    assert "Namespaces  team-a=viewer" in run("whoami").stdout
    run("config", "use-context", "ops")
    assert "Namespaces  team-a=admin" in run("whoami").stdout
    assert "Namespaces  team-a=viewer" in run("--context", "dev", "whoami").stdout
    rows = table(run("config", "get-contexts"))
    assert rows[0] == ["CURRENT", "NAME", "BASE", "URL", "NAMESPACE", "CREDENTIAL"]
    assert rows[1:] == [["dev", cpctl.url, "-", "yes"], ["*", "ops", cpctl.url, "team-a", "yes"]]
    config = tmp_path / "config" / "cpctl"
    assert (config.stat().st_mode & 0o777, (config / "config.toml").stat().st_mode & 0o777) == (0o700, 0o600)
    assert "no context 'nope'" in run("--context", "nope", "whoami", expect=2).stderr
    assert "no context 'nope'" in run("config", "use-context", "nope", expect=2).stderr


def test_existing_config_directory_is_tightened(cpctl, tmp_path):
    config = tmp_path / "config" / "cpctl"
    config.mkdir(parents=True, mode=0o755)
    config.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CP_")}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    subprocess.run([CPCTL, "logout"], env=env, check=True, timeout=60, capture_output=True)  # only looks inside
    assert config.stat().st_mode & 0o777 == 0o700


def test_quota_command(cpctl):
    rows = table(cpctl("admin", "ns", "quota", "team-a", role=Role.ADMIN))
    assert rows[0] == ["QUOTA", "LIMIT"] and ["max_sandboxes", "none"] in rows
    cpctl("admin", "ns", "quota", "team-a", "max_sandboxes=3", role=Role.ADMIN)
    changed = json.loads(
        cpctl("admin", "ns", "quota", "team-a", "max_workspaces=1", "-o", "json", role=Role.ADMIN).stdout
    )
    assert (changed["max_sandboxes"], changed["max_workspaces"], changed["max_running_jobs"]) == (3, 1, None)
    assert "unknown quota" in cpctl("admin", "ns", "quota", "team-a", "max_cats=1", role=Role.ADMIN, expect=2).stderr


def test_credential_with_a_trailing_newline_works_and_a_malformed_one_is_never_echoed(cpctl):
    key = cpctl.keys[Role.OPERATOR]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CP_")}
    env.update(CP_BASE_URL=cpctl.url, CP_API_KEY=key + "\n")  # as read from a file or a Kubernetes secret
    ok = subprocess.run([CPCTL, "whoami"], env=env, capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and "team-a=operator" in ok.stdout, ok.stderr
    env["CP_API_KEY"] = key[:10] + "\x01" + key[10:]
    bad = subprocess.run([CPCTL, "whoami"], env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "api_key: character 11" in bad.stderr
    assert key[:10] not in bad.stderr + bad.stdout and key[11:] not in bad.stderr + bad.stdout


def test_base_url_without_scheme_is_a_usage_error_without_retries(cpctl):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CP_")}
    env.update(CP_BASE_URL=cpctl.url.removeprefix("http://"), CP_API_KEY=cpctl.keys[Role.VIEWER])
    result = subprocess.run([CPCTL, "jobs", "ls"], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "is not an http:// or https:// address; e.g. " + cpctl.url in result.stderr
