"""cpctl's output as text: every listing as a table, `-o wide`, `-o json` and `-o yaml`, for
fixed objects at a fixed time, against the golden files in tests/sdk/golden/.

`-o json` (and `--json`) is a contract for scripts: a change to a golden JSON file is a
breaking change. After a deliberate change of looks, `CPCTL_GOLDEN_UPDATE=1` rewrites the
files; review their diff.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cpsdk import cli
from cpsdk._gen.containers.api.v1 import (
    egress_pb2,
    environment_pb2,
    identity_pb2,
    job_pb2,
    namespace_pb2,
    runner_admin_pb2,
    sandbox_pb2,
    workspace_pb2,
)
from cpsdk._gen.uploads.api.v1 import uploads_pb2
from cpsdk._render import Output, age, yaml_lines

GOLDEN = Path(__file__).parent / "golden"
NOW = datetime(2026, 11, 24, 12, 0, 0, tzinfo=UTC)
CPCTL = str(Path(sys.executable).parent / "cpctl")


def _at(message, field: str, ago: timedelta):
    getattr(message, field).FromDatetime(NOW - ago)
    return message


def listings():
    job = job_pb2.Job(
        job_id="job_01jd8m3v1",
        namespace="team-a",
        image="busybox:1.36",
        command=["sh", "-c", "echo hi; sleep 5"],
        env={"GREETING": "hello world", "A": "1"},
        state=job_pb2.JOB_STATE_QUEUED,
        created_by="key:key_01jd8",
    )
    done = job_pb2.Job(
        job_id="job_01jd8m3v0",
        namespace="team-a",
        image="python:3.12",
        command=["true"],
        state=job_pb2.JOB_STATE_SUCCEEDED,
        created_by="user:ada",
    )
    sandbox = sandbox_pb2.Sandbox(
        sandbox_id="sbx_01jd8",
        namespace="team-a",
        image="python:3.12",
        workspace_id="ws_01jd8",
        agent_key_id="key_01jd9",
        created_by="user:ada",
    )
    workspace = workspace_pb2.Workspace(workspace_id="ws_01jd8", namespace="team-a", name="scratch", created_by="x")
    environment = environment_pb2.Environment(
        environment_id="env_01jd8",
        namespace="team-a",
        name="py",
        image="python:3.12",
        state=environment_pb2.ENVIRONMENT_STATE_READY,
    )
    grant = egress_pb2.EgressGrant(
        grant_id="egr_01jd8",
        namespace="team-a",
        target="api.example.com:443",
        kind=egress_pb2.EGRESS_TARGET_KIND_HOST,
        created_by="user:ada",
    )
    event = egress_pb2.EgressEvent(
        namespace="team-a",
        kind=egress_pb2.EGRESS_EVENT_KIND_CONNECTION,
        target="10.0.0.5:5432",
        sandbox_id="sbx_01jd8",
        allowed=False,
        actor="agent",
    )
    upload = uploads_pb2.Upload(
        upload_id="u0001", path="/finance/2026", slug="q3-report.pdf", size_bytes=48213, tags=["finance", "final"]
    )
    namespace = namespace_pb2.Namespace(
        namespace="team-a",
        groups=[
            namespace_pb2.GroupBinding(oidc_group="cn=ops,ou=groups", role=namespace_pb2.ROLE_ADMIN),
            namespace_pb2.GroupBinding(oidc_group="devs", role=namespace_pb2.ROLE_OPERATOR),
        ],
        quotas=namespace_pb2.Quotas(max_sandboxes=2, max_workspaces=0),
        internal_targets=[namespace_pb2.InternalTarget(name="db", host="10.0.0.5", ports=[5432])],
    )
    key = namespace_pb2.ApiKey(
        key_id="key_01jd8",
        name="viewer-demo",
        namespace="team-a",
        role=namespace_pb2.ROLE_VIEWER,
        kind=namespace_pb2.API_KEY_KIND_STANDARD,
        state=namespace_pb2.API_KEY_STATE_REVOKED,
        hint="cpk_…3f9a",
        created_by="user:ada",
    )
    _at(key, "expires_at", -timedelta(days=30))
    runner = runner_admin_pb2.Runner(
        runner_id="rnr_01jd8",
        name="build-host-7",
        namespaces=["team-a", "team-b"],
        state=runner_admin_pb2.RUNNER_STATE_ACTIVE,
        work_held=2,
        version="cprunner 0.1.0",
        key_id="key_01jda",
        key_hint="cpk_…7c2e",
        created_by="user:ada",
    )
    never_seen = runner_admin_pb2.Runner(
        runner_id="rnr_01jd7", name="spare", state=runner_admin_pb2.RUNNER_STATE_REVOKED, created_by="user:ada"
    )
    return {
        "jobs": ([_at(job, "create_time", timedelta(minutes=3)), _at(done, "create_time", timedelta(days=2))], cli.JOB),
        "sandboxes": ([_at(sandbox, "create_time", timedelta(hours=5))], cli.SANDBOX),
        "workspaces": ([_at(workspace, "create_time", timedelta(seconds=45))], cli.WORKSPACE),
        "environments": ([_at(environment, "create_time", timedelta(days=14))], cli.ENVIRONMENT),
        "egress": ([_at(grant, "create_time", timedelta(minutes=59))], cli.GRANT),
        "egress-events": ([_at(event, "event_time", timedelta(seconds=5))], cli.EVENT),
        "uploads": ([_at(upload, "created_at", timedelta(days=400))], cli.UPLOAD),
        "namespaces": ([_at(namespace, "create_time", timedelta(days=3))], cli.NAMESPACE),
        "keys": ([_at(_at(key, "created", timedelta(days=2)), "last_used", timedelta(hours=1))], cli.KEY),
        "runners": (
            [
                _at(_at(runner, "create_time", timedelta(days=6)), "last_seen_time", timedelta(seconds=4)),
                _at(never_seen, "create_time", timedelta(days=7)),
            ],
            cli.RUNNER,
        ),
    }


def rendered(fmt: str) -> str:
    text = []
    for name, (items, view) in listings().items():
        out = io.StringIO()
        Output(fmt, out=out, now=NOW).rows(items, view)
        text.append(f"### {name}\n{out.getvalue()}")
    whoami = identity_pb2.WhoAmIResponse(
        subject="key_01jd8",
        name="ops",
        kind="api_key",
        key_id="key_01jd8",
        namespaces=[identity_pb2.NamespaceRole(namespace="team-a", role=2)],
    )
    out = io.StringIO()
    Output(fmt, out=out, now=NOW).one(whoami, cli.WHOAMI)
    text.append(f"### whoami\n{out.getvalue()}")
    return "\n".join(text)


@pytest.mark.parametrize("fmt", ["table", "wide", "json", "yaml"])
def test_golden_output(fmt):
    path = GOLDEN / f"{fmt}.txt"
    text = rendered(fmt)
    if os.environ.get("CPCTL_GOLDEN_UPDATE"):
        path.write_text(text)
    assert text == path.read_text()


def test_json_output_is_the_messages_json():
    # The contract under the golden file: protobuf's JSON mapping of each object, one per line.
    for items, view in listings().values():
        out = io.StringIO()
        Output("json", out=out, now=NOW).rows(items, view)
        from google.protobuf import json_format

        assert [json.loads(line) for line in out.getvalue().splitlines()] == [
            json_format.MessageToDict(m) for m in items
        ]


def test_yaml_quotes_what_yaml_would_misread():
    data = {
        "a": "yes",
        "b": "2026-11-24T12:00:00Z",
        "c": "0123",
        "d": "x: y",
        "e": "",
        "f": True,
        "g": 3,
        "h": "plain text",
        "i": "# not a comment",
        "j": [],
        "k": {},
    }
    assert yaml_lines(data) == [
        'a: "yes"',
        'b: "2026-11-24T12:00:00Z"',
        'c: "0123"',
        'd: "x: y"',
        'e: ""',
        "f: true",
        "g: 3",
        "h: plain text",
        'i: "# not a comment"',
        "j: []",
        "k: {}",
    ]


def test_ages():
    assert [age(NOW - timedelta(seconds=s), NOW) for s in (0, 59, 60, 3599, 3600, 86399, 86400, 40 * 86400, -60)] == [
        "0s",
        "59s",
        "1m",
        "59m",
        "1h",
        "23h",
        "1d",
        "40d",
        "in 1m",
    ]


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    items, view = listings()["jobs"]
    monkeypatch.delenv("NO_COLOR", raising=False)
    tty = Tty()
    Output("table", out=tty, now=NOW).rows(items, view)
    assert "\033[33mqueued\033[0m" in tty.getvalue() and "\033[32msucceeded\033[0m" in tty.getvalue()
    # Columns stay aligned: the escape codes do not count towards the width.
    plain = [
        line.replace("\033[33m", "").replace("\033[32m", "").replace("\033[0m", "")
        for line in tty.getvalue().splitlines()
    ]
    pipe = io.StringIO()
    Output("table", out=pipe, now=NOW).rows(items, view)
    assert plain == pipe.getvalue().splitlines() and "\033" not in pipe.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    tty = Tty()
    Output("table", out=tty, now=NOW).rows(items, view)
    assert "\033" not in tty.getvalue()


def test_every_command_has_a_description_and_an_example():
    assert len(cli.COMMANDS) > 30
    for command in cli.COMMANDS:
        words = " ".join(command.path)
        assert command.help and command.example.count("cpctl") >= 1, words
        shown = subprocess.run([CPCTL, *command.path, "--help"], capture_output=True, text=True, timeout=30)
        assert shown.returncode == 0, (words, shown.stderr)
        assert command.help in shown.stdout and f"example:\n  {command.example}" in shown.stdout, words


def test_every_command_group_has_a_description_and_an_example():
    for group, description in cli.GROUPS.items():
        shown = subprocess.run([CPCTL, *group.split(), "--help"], capture_output=True, text=True, timeout=30)
        assert shown.returncode == 0 and description in shown.stdout and "example:\n  " in shown.stdout, group


def test_version():
    from cpsdk import __version__

    shown = subprocess.run([CPCTL, "--version"], capture_output=True, text=True, timeout=30)
    assert (shown.returncode, shown.stdout) == (0, f"cpctl {__version__}\n")


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts(shell):
    script = subprocess.run([CPCTL, "completion", shell], capture_output=True, text=True, timeout=30, check=True).stdout
    assert "cpctl" in script


def test_bash_loads_the_completion_and_completes(tmp_path):
    # bash sources the generated script and runs its completion function as the shell would
    # on TAB, which calls cpctl back (argcomplete) for the candidates.
    env = {**os.environ, "PATH": f"{Path(CPCTL).parent}{os.pathsep}{os.environ['PATH']}"}
    script = r"""
set -e
source <(cpctl completion bash)
complete -p cpctl
complete_line() {
  COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}; read -ra COMP_WORDS <<<"$COMP_LINE"
  [[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=()
  _python_argcomplete cpctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
  echo "${COMPREPLY[*]}"
}
complete_line "cpctl jo"
complete_line "cpctl admin keys "
complete_line "cpctl config use-"
"""
    result = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "_python_argcomplete" in lines[0]
    assert lines[1].split() == ["jobs"]
    assert sorted(w for w in lines[2].split() if not w.startswith("-")) == ["issue", "ls", "revoke"]
    assert lines[3].split() == ["use-context"]
