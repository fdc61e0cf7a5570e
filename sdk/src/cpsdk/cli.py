"""cpctl: the command line over the SDK, in the manner of `gh` and `kubectl`.

Every command is one function registered with `@command("group verb", help, example)`; the
parser, `--help`, completion and the docs' command list all come from that registry. The
function gets the client (or nothing, for `local=True` commands) and the parsed arguments,
and returns what to show: a message (shown with `view`), an iterable of messages (a
listing, streamed), a string, or None. Exit codes follow the error class (EXIT_CODES); a
usage error is 2. Messages go to stderr and never carry the credential.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import argcomplete
from google.protobuf.message import Message

from . import _config, cli_streams, errors
from ._render import FORMATS, Column, Output, View, as_dict
from .client import AdminClient, Client, check_base_url, check_credential
from .login import LoginError, LoginSettings, bearer, forget_token, load_token, login
from .types import Binding, Role

EXIT_CODES = {
    "invalid_argument": 3,
    "failed_precondition": 3,
    "out_of_range": 3,
    "unauthenticated": 4,
    "permission_denied": 5,
    "not_found": 6,
    "already_exists": 7,
    "resource_exhausted": 8,
    "aborted": 9,
    "unavailable": 9,
    "deadline_exceeded": 9,
    "unimplemented": 10,
}
USAGE = 2


class UsageError(Exception):
    """Bad command-line input, caught before any call; the message names the flag."""


# ---- the registry ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    path: tuple[str, ...]  # ("admin", "keys", "ls")
    run: Callable
    help: str
    example: str
    arguments: Callable[[argparse.ArgumentParser], None]
    view: View = field(default_factory=list)
    admin: bool = False  # NamespaceService: an AdminClient
    raw: bool = False  # prints for itself: run(client, args, out)
    local: bool = False  # no client: config, login, completion


COMMANDS: list[Command] = []
GROUPS = {
    "jobs": "jobs of the namespace",
    "sandboxes": "sandboxes of the namespace",
    "workspaces": "workspaces of the namespace",
    "environments": "environments (images built for sandboxes) of the namespace",
    "egress": "egress grants and events of the namespace",
    "uploads": "uploads of a bucket",
    "admin": "NamespaceService and RunnerAdminService: namespaces, API keys, runners (admin credentials only)",
    "admin ns": "namespaces: bindings and quotas",
    "admin ns bindings": "group → role bindings of a namespace",
    "admin keys": "API keys",
    "admin runners": "runners (RunnerAdminService) and their keys",
    "config": f"contexts in {_config.config_path()} (base URL, namespace, credential)",
}


def command(path: str, help: str, example: str, arguments=None, view: View | None = None, **flags):
    """Registers a command: `@command("jobs ls", "list jobs", "cpctl jobs ls -o wide")`."""

    def register(run: Callable) -> Callable:
        words = tuple(path.split())
        COMMANDS.append(Command(words, run, help, example, arguments or _none, view or [], **flags))
        return run

    return register


def _none(parser):
    pass


def _id(name: str):
    return lambda parser: parser.add_argument("id", metavar=name)


def _page(parser):
    parser.add_argument("--page-size", type=int, default=0, help="items per request (the server caps it)")


# ---- views -----------------------------------------------------------------------------------


JOB = [
    Column("JOB", "job_id"),
    Column("STATE", "state", state=True),
    Column("IMAGE", "image"),
    Column("COMMAND", "command"),
    Column("AGE", "create_time"),
    Column("ENV", "env", wide=True),
    Column("UPDATED", "update_time", wide=True),
    Column("CREATED BY", "created_by", wide=True),
]
SANDBOX = [
    Column("SANDBOX", "sandbox_id"),
    Column("IMAGE", "image"),
    Column("WORKSPACE", "workspace_id"),
    Column("AGE", "create_time"),
    Column("AGENT KEY", "agent_key_id", wide=True),
    Column("CREATED BY", "created_by", wide=True),
]
WORKSPACE = [
    Column("WORKSPACE", "workspace_id"),
    Column("NAME", "name"),
    Column("AGE", "create_time"),
    Column("CREATED BY", "created_by", wide=True),
]
ENVIRONMENT = [
    Column("ENVIRONMENT", "environment_id"),
    Column("NAME", "name"),
    Column("IMAGE", "image"),
    Column("STATE", "state", state=True),
    Column("AGE", "create_time"),
    Column("UPDATED", "update_time", wide=True),
    Column("CREATED BY", "created_by", wide=True),
]
GRANT = [
    Column("GRANT", "grant_id"),
    Column("TARGET", "target"),
    Column("KIND", "kind"),
    Column("AGE", "create_time"),
    Column("CREATED BY", "created_by", wide=True),
]
EVENT = [
    Column("AGE", "event_time"),
    Column("KIND", "kind"),
    Column("TARGET", "target"),
    Column("SANDBOX", "sandbox_id"),
    Column("ALLOWED", "allowed", state=True),
    Column("GRANT", "grant_id", wide=True),
    Column("ACTOR", "actor", wide=True),
]
UPLOAD = [
    Column("UPLOAD", "upload_id"),
    Column("PATH", "path"),
    Column("SLUG", "slug"),
    Column("SIZE", "size_bytes"),
    Column("AGE", "created_at"),
    Column("TAGS", "tags", wide=True),
    Column("UPDATED", "updated_at", wide=True),
]
NAMESPACE = [
    Column("NAMESPACE", "namespace"),
    Column("GROUPS", "groups"),
    Column("AGE", "create_time"),
    Column("QUOTAS", "quotas", wide=True),
    Column("INTERNAL TARGETS", "internal_targets", wide=True),
    Column("UPDATED", "update_time", wide=True),
]
KEY = [
    Column("KEY", "key_id"),
    Column("NAME", "name"),
    Column("NAMESPACE", "namespace"),
    Column("ROLE", "role"),
    Column("STATE", "state", state=True),
    Column("AGE", "created"),
    Column("LAST USED", "last_used"),
    Column("EXPIRES", "expires_at", wide=True),
    Column("KIND", "kind", wide=True),
    Column("HINT", "hint", wide=True),
    Column("CREATED BY", "created_by", wide=True),
]
RUNNER = [
    Column("RUNNER", "runner_id"),
    Column("NAME", "name"),
    Column("NAMESPACES", lambda runner, now: ",".join(runner.namespaces) or "all"),
    Column("STATE", "state", state=True),
    Column("WORK", "work_held"),
    Column("LAST SEEN", "last_seen_time"),
    Column("AGE", "create_time"),
    Column("VERSION", "version", wide=True),
    Column("KEY", "key_id", wide=True),
    Column("HINT", "key_hint", wide=True),
    Column("CREATED BY", "created_by", wide=True),
]
WHOAMI = [
    Column("SUBJECT", "subject"),
    Column("NAME", "name"),
    Column("KIND", "kind"),
    Column("ADMIN", "admin"),
    Column("NAMESPACES", "namespaces"),
    Column("SCOPES", lambda m, now: " ".join(m.scopes) or "-"),
    Column("KEY", "key_id"),
]


# ---- argument helpers ------------------------------------------------------------------------


def _pairs(items: list[str], flag: str) -> list[tuple[str, str]]:
    pairs = []
    for item in items or []:
        key, sep, value = item.rpartition("=") if flag == "GROUP=ROLE" else item.partition("=")
        if not sep or not key:
            raise UsageError(f"{flag}: expected KEY=VALUE, got {item!r}")
        pairs.append((key, value))
    return pairs


def _bindings(items: list[str]) -> list[Binding]:
    try:
        return [Binding(group, Role.parse(role)) for group, role in _pairs(items, "GROUP=ROLE")]
    except ValueError as exc:
        raise UsageError(f"GROUP=ROLE: {exc}") from None


def _metadata(items: list[str]) -> dict[str, str | bool]:
    """--meta key=value (a string) or key:=true / key:=false (a boolean)."""
    result: dict[str, str | bool] = {}
    for key, value in _pairs(items, "--meta"):
        if key.endswith(":"):
            if value not in ("true", "false"):
                raise UsageError(f"--meta {key}={value}: a typed value (key:=…) must be true or false")
            result[key[:-1]] = value == "true"
        else:
            result[key] = value
    return result


# ---- commands --------------------------------------------------------------------------------


@command("whoami", "show the principal the API resolves this credential to", "cpctl whoami", view=WHOAMI)
def whoami(client, args):
    return client.whoami()


def _jobs_run(parser):
    parser.add_argument("image")
    parser.add_argument("command_args", nargs="*", metavar="CMD", help="the command and its arguments, after `--`")
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="repeatable")
    parser.add_argument("--wait", action="store_true", help="wait until the job ends; exit with its exit code")


@command(
    "jobs run",
    "run a command in an image (a runner picks it up)",
    "cpctl jobs run --wait busybox:1.36 --env GREETING=hi -- sh -c 'echo $GREETING'",
    _jobs_run,
    JOB,
)
def jobs_run(client, args):
    job = client.jobs.run(args.image, command=args.command_args, env=dict(_pairs(args.env, "--env")))
    return cli_streams.wait(client, job, args.output == "json") if args.wait else job


def _jobs_ls(parser):
    _page(parser)
    parser.add_argument("-w", "--watch", action="store_true", help="then print every change as it happens")


@command("jobs ls", "list the namespace's jobs, newest first", "cpctl jobs ls -w", _jobs_ls, JOB)
def jobs_ls(client, args):
    if args.watch:
        return cli_streams.watch(client, args.output == "json")
    return client.jobs.list(page_size=args.page_size)


def _jobs_logs(parser):
    parser.add_argument("id", metavar="JOB_ID")
    parser.add_argument("-f", "--follow", action="store_true", help="print the output as it comes, until the end")


@command("jobs logs", "print a job's output", "cpctl jobs logs -f job_01hx…", _jobs_logs)
def jobs_logs(client, args):
    cli_streams.logs(client, args.id, args.follow)


@command("jobs get", "show one job", "cpctl jobs get job_01hx…", _id("JOB_ID"), JOB)
def jobs_get(client, args):
    return client.jobs.get(args.id)


@command("jobs cancel", "cancel a queued or running job", "cpctl jobs cancel job_01hx…", _id("JOB_ID"), JOB)
def jobs_cancel(client, args):
    return client.jobs.cancel(args.id)


def _sandbox_create(parser):
    parser.add_argument("image")
    parser.add_argument("--workspace", default="", metavar="WORKSPACE_ID", help="mount this workspace")


@command(
    "sandboxes create",
    "create a sandbox from an image",
    "cpctl sandboxes create python:3.12 --workspace ws_01hx…",
    _sandbox_create,
    SANDBOX,
)
def sandboxes_create(client, args):
    return client.sandboxes.create(args.image, workspace_id=args.workspace)


@command("sandboxes ls", "list the namespace's sandboxes", "cpctl sandboxes ls", _page, SANDBOX)
def sandboxes_ls(client, args):
    return client.sandboxes.list(page_size=args.page_size)


@command("sandboxes get", "show one sandbox", "cpctl sandboxes get sbx_01hx…", _id("SANDBOX_ID"), SANDBOX)
def sandboxes_get(client, args):
    return client.sandboxes.get(args.id)


@command(
    "sandboxes delete",
    "delete a sandbox (and revoke its agent key)",
    "cpctl sandboxes delete sbx_01hx…",
    _id("SANDBOX_ID"),
    SANDBOX,
)
def sandboxes_delete(client, args):
    return client.sandboxes.delete(args.id)


@command(
    "sandboxes preview-url",
    "print the sandbox's preview address",
    "cpctl sandboxes preview-url sbx_01hx…",
    _id("SANDBOX_ID"),
)
def sandboxes_preview_url(client, args):
    return client.sandboxes.preview_url(args.id)


@command(
    "sandboxes app-key", "print the sandbox's application key", "cpctl sandboxes app-key sbx_01hx…", _id("SANDBOX_ID")
)
def sandboxes_app_key(client, args):
    return client.sandboxes.app_key(args.id)


@command(
    "workspaces create",
    "create a workspace",
    "cpctl workspaces create scratch",
    lambda p: p.add_argument("name"),
    WORKSPACE,
)
def workspaces_create(client, args):
    return client.workspaces.create(args.name)


@command("workspaces ls", "list the namespace's workspaces", "cpctl workspaces ls", _page, WORKSPACE)
def workspaces_ls(client, args):
    return client.workspaces.list(page_size=args.page_size)


@command("workspaces get", "show one workspace", "cpctl workspaces get ws_01hx…", _id("WORKSPACE_ID"), WORKSPACE)
def workspaces_get(client, args):
    return client.workspaces.get(args.id)


@command("workspaces delete", "delete a workspace", "cpctl workspaces delete ws_01hx…", _id("WORKSPACE_ID"), WORKSPACE)
def workspaces_delete(client, args):
    return client.workspaces.delete(args.id)


def _env_register(parser):
    parser.add_argument("name")
    parser.add_argument("image")


@command(
    "environments register",
    "register an image as a named environment",
    "cpctl environments register py python:3.12",
    _env_register,
    ENVIRONMENT,
)
def environments_register(client, args):
    return client.environments.register(args.name, args.image)


@command("environments ls", "list the namespace's environments", "cpctl environments ls", _page, ENVIRONMENT)
def environments_ls(client, args):
    return client.environments.list(page_size=args.page_size)


@command(
    "environments get", "show one environment", "cpctl environments get env_01hx…", _id("ENVIRONMENT_ID"), ENVIRONMENT
)
def environments_get(client, args):
    return client.environments.get(args.id)


@command(
    "environments build",
    "build an environment's image",
    "cpctl environments build env_01hx…",
    _id("ENVIRONMENT_ID"),
    ENVIRONMENT,
)
def environments_build(client, args):
    return client.environments.build(args.id)


@command(
    "egress grant",
    "allow egress to host[:port] or a registered internal target",
    "cpctl egress grant api.example.com:443",
    lambda p: p.add_argument("target"),
    GRANT,
)
def egress_grant(client, args):
    return client.egress.grant(args.target)


@command("egress ls", "list the namespace's egress grants", "cpctl egress ls", _page, GRANT)
def egress_ls(client, args):
    return client.egress.list(page_size=args.page_size)


@command("egress revoke", "revoke an egress grant", "cpctl egress revoke egr_01hx…", _id("GRANT_ID"), GRANT)
def egress_revoke(client, args):
    return client.egress.revoke(args.id)


@command(
    "egress events", "list grants given and revoked, and connections seen", "cpctl egress events -o wide", _page, EVENT
)
def egress_events(client, args):
    return client.egress.events(page_size=args.page_size)


def _uploads_ls(parser):
    parser.add_argument("bucket", nargs="?", default=None, metavar="NS/BUCKET", help="or BUCKET in --namespace")
    parser.add_argument("--tag", action="append", default=[], help="carrying this tag (repeatable: all of them)")
    parser.add_argument("--slug", default="", help="case-insensitive slug prefix")
    parser.add_argument("--path", default="", help="this path or below it")
    parser.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE", help="or KEY:=true|false")
    parser.add_argument("--sort", default="", help="created_at (default), updated_at, slug, size_bytes, order")
    parser.add_argument("--asc", action="store_true", help="ascending (default descending)")
    parser.add_argument("--limit", type=int, default=0, help="stop after N uploads")
    _page(parser)


@command(
    "uploads ls",
    "list a bucket's uploads, streaming page after page",
    "cpctl uploads ls team-a/docs --tag finance --sort size_bytes --asc --limit 5",
    _uploads_ls,
    UPLOAD,
)
def uploads_ls(client, args):
    limit = args.limit
    if limit < 0:
        raise UsageError("--limit: must be 0 (no limit) or more")
    page_size = args.page_size or (min(limit, 1000) if limit else 0)
    items = client.uploads.list(
        args.bucket,
        tags=args.tag,
        slug=args.slug,
        path=args.path,
        metadata=_metadata(args.meta),
        sort=args.sort,
        order="asc" if args.asc else "",
        page_size=page_size,
    )
    return itertools.islice(items, limit) if limit else items


def _ns_create(parser):
    parser.add_argument("name")
    parser.add_argument("--bind", action="append", default=[], metavar="GROUP=ROLE", help="repeatable")


@command(
    "admin ns create",
    "create a namespace",
    "cpctl admin ns create team-b --bind team-b-ops=operator",
    _ns_create,
    NAMESPACE,
    admin=True,
)
def ns_create(client, args):
    return client.create_namespace(args.name, groups=_bindings(args.bind))


@command(
    "admin ns get",
    "show one namespace, with its quotas and targets",
    "cpctl admin ns get team-a",
    lambda p: p.add_argument("name"),
    NAMESPACE,
    admin=True,
)
def ns_get(client, args):
    return client.get_namespace(args.name)


@command("admin ns ls", "list namespaces", "cpctl admin ns ls -o wide", _page, NAMESPACE, admin=True)
def ns_ls(client, args):
    return client.list_namespaces(page_size=args.page_size)


def _bindings_set(parser):
    parser.add_argument("name")
    parser.add_argument("bind", nargs="*", metavar="GROUP=ROLE")
    parser.add_argument("--clear", action="store_true", help="remove every binding")


@command(
    "admin ns bindings set",
    "replace every binding of a namespace (full replace)",
    "cpctl admin ns bindings set team-a devs=operator 'cn=ops,ou=groups=admin'",
    _bindings_set,
    NAMESPACE,
    admin=True,
)
def bindings_set(client, args):
    if args.clear == bool(args.bind):
        raise UsageError("bindings set: give GROUP=ROLE pairs or --clear (not both, not neither)")
    return client.update_namespace(args.name, groups=[] if args.clear else _bindings(args.bind))


QUOTAS = ("max_sandboxes", "max_running_jobs", "max_workspaces", "max_environments", "max_egress_grants")


def _quota(parser):
    parser.add_argument("name")
    parser.add_argument("limits", nargs="*", metavar="QUOTA=N", help=f"{', '.join(QUOTAS)}; N or `none`")


@command(
    "admin ns quota",
    "show a namespace's quotas, or change some (the others stay)",
    "cpctl admin ns quota team-a max_sandboxes=5 max_workspaces=none",
    _quota,
    admin=True,
    raw=True,
)
def ns_quota(client, args, out: Output):
    quotas = _limits(client.get_namespace(args.name).quotas)
    for name, value in _pairs(args.limits, "QUOTA=N"):
        if name not in QUOTAS:
            raise UsageError(f"QUOTA=N: unknown quota {name!r}; expected one of {', '.join(QUOTAS)}")
        if value != "none" and not value.isdigit():
            raise UsageError(f"QUOTA=N: {name}={value}: N is a whole number, or `none` for no limit")
        quotas[name] = None if value == "none" else int(value)
    if args.limits:
        quotas = _limits(client.update_namespace(args.name, quotas=quotas).quotas)
    if out.format in ("json", "yaml"):
        out.data(quotas)
    else:
        out.table([["QUOTA", "LIMIT"], *([q, "none" if n is None else str(n)] for q, n in quotas.items())])


def _limits(quotas) -> dict[str, int | None]:
    return {q: getattr(quotas, q) if quotas.HasField(q) else None for q in QUOTAS}


def _keys_issue(parser):
    parser.add_argument("namespace")
    parser.add_argument("--name", required=True, help="a label for people")
    parser.add_argument("--role", required=True, help="viewer, operator or admin")


@command(
    "admin keys issue",
    "issue an API key; prints the plaintext alone on stdout (shown once)",
    "KEY=$(cpctl admin keys issue team-a --name ci --role operator)",
    _keys_issue,
    admin=True,
    raw=True,
)
def keys_issue(client, args, out: Output):
    try:
        role = Role.parse(args.role)
    except ValueError as exc:
        raise UsageError(f"--role: {exc}") from None
    issued = client.issue_api_key(args.namespace, args.name, role)
    if out.format in ("json", "yaml"):
        out.data({"key": as_dict(issued.key), "plaintext": issued.plaintext})
        return
    key = issued.key
    print(
        f"issued {key.key_id} ({role.name.lower()} in {key.namespace}); store the key now, it is shown once",
        file=sys.stderr,
    )
    print(issued.plaintext, file=out.out)


def _keys_ls(parser):
    parser.add_argument("namespace", nargs="?", default="", help="every namespace when left out")
    _page(parser)


@command(
    "admin keys ls",
    "list API keys (never their plaintext), newest first",
    "cpctl admin keys ls team-a -o wide",
    _keys_ls,
    KEY,
    admin=True,
)
def keys_ls(client, args):
    return client.list_api_keys(args.namespace, page_size=args.page_size)


@command(
    "admin keys revoke",
    "revoke an API key at once",
    "cpctl admin keys revoke key_01hx…",
    _id("KEY_ID"),
    KEY,
    admin=True,
)
def keys_revoke(client, args):
    return client.revoke_api_key(args.id)


def _runners_issue(parser):
    parser.add_argument("name", help="a label for people, e.g. the host's name")
    parser.add_argument(
        "--namespace", dest="namespaces", action="append", default=[], metavar="NS",
        help="limit it to this namespace's work (repeatable; none: every namespace)",
    )  # fmt: skip


@command(
    "admin runners issue",
    "issue a runner key; prints the plaintext alone on stdout (shown once)",
    "CP_RUNNER_KEY=$(cpctl admin runners issue build-host-7 --namespace team-a)",
    _runners_issue,
    admin=True,
    raw=True,
)
def runners_issue(client, args, out: Output):
    issued = client.runners.issue(args.name, namespaces=args.namespaces)
    if out.format in ("json", "yaml"):
        out.data({"runner": as_dict(issued.runner), "plaintext": issued.plaintext})
        return
    runner = issued.runner
    print(f"issued {runner.runner_id} ({runner.name}); store the key now, it is shown once", file=sys.stderr)
    print(issued.plaintext, file=out.out)


@command(
    "admin runners ls",
    "list runners (never their keys), newest first",
    "cpctl admin runners ls -o wide",
    _page,
    RUNNER,
    admin=True,
)
def runners_ls(client, args):
    return client.runners.list(page_size=args.page_size)


@command(
    "admin runners revoke",
    "revoke a runner's key at once; its leases end and its work is queued again",
    "cpctl admin runners revoke rnr_01hx…",
    _id("RUNNER_ID"),
    RUNNER,
    admin=True,
)
def runners_revoke(client, args):
    return client.runners.revoke(args.id)


def _login(parser):
    parser.add_argument("--issuer", default=os.environ.get("CP_OIDC_ISSUER", ""))
    parser.add_argument("--client-id", default=os.environ.get("CP_OIDC_CLIENT_ID", "cpctl"))
    parser.add_argument("--resource", default=os.environ.get("CP_OIDC_RESOURCE", ""), help="the API's audience")
    parser.add_argument("--scope", default=os.environ.get("CP_OIDC_SCOPE", LoginSettings.scope))
    parser.add_argument("--no-browser", action="store_true", help="print the address only")
    parser.add_argument("--wait", type=float, default=300, help="seconds to wait for the browser")


@command(
    "login",
    "sign in through the identity provider (OIDC, PKCE)",
    "cpctl login --issuer https://idp.example.com --resource https://cp.example.com/api",
    _login,
    local=True,
)
def cmd_login(args, out: Output):
    issuer = args.issuer or (load_token() or {}).get("issuer", "")
    if not issuer:
        raise UsageError("--issuer: required (or set CP_OIDC_ISSUER): the identity provider the API trusts")
    base_url = args.base_url or os.environ.get("CP_BASE_URL", "")
    record = login(
        LoginSettings(
            issuer=issuer, client_id=args.client_id, resource=args.resource, scope=args.scope, base_url=base_url
        ),
        open_browser=not args.no_browser,
        timeout=args.wait,
    )
    print(
        f"signed in at {record['issuer']}; token stored (refreshable: {'yes' if record['refresh_token'] else 'no'})",
        file=sys.stderr,
    )


@command("logout", "forget the stored sign-in", "cpctl logout", local=True)
def cmd_logout(args, out: Output):
    print("signed out" if forget_token() else "not signed in", file=sys.stderr)


def _set_context(parser):
    parser.add_argument("name")
    parser.add_argument("--base-url", dest="ctx_base_url", default=None, help="the API's address")
    parser.add_argument("--namespace", dest="ctx_namespace", default=None, help="namespace to act in")
    parser.add_argument("--api-key-stdin", action="store_true", help="read the credential from stdin (not argv)")


@command(
    "config set-context",
    "create or change a context; the credential is read from stdin",
    "cpctl config set-context dev --base-url http://127.0.0.1:8000 --api-key-stdin <key.txt",
    _set_context,
    local=True,
)
def config_set_context(args, out: Output):
    data = _config.load()
    context = data["contexts"].setdefault(args.name, {})
    if args.ctx_base_url is not None:
        context["base-url"] = check_base_url(args.ctx_base_url)
    if args.ctx_namespace is not None:
        context["namespace"] = args.ctx_namespace
    if args.api_key_stdin:
        context["api-key"] = check_credential(sys.stdin.read())
    data.setdefault("current-context", args.name)
    path = _config.save(data)
    print(f"context {args.name} saved in {path}", file=sys.stderr)


@command(
    "config use-context",
    "make a context the default",
    "cpctl config use-context prod",
    lambda p: p.add_argument("name"),
    local=True,
)
def config_use_context(args, out: Output):
    data = _config.load()
    if args.name not in data["contexts"]:
        raise UsageError(f"use-context: no context {args.name!r}; defined: {', '.join(data['contexts']) or 'none'}")
    data["current-context"] = args.name
    _config.save(data)
    print(f"switched to context {args.name}", file=sys.stderr)


@command("config get-contexts", "list contexts; * marks the current one", "cpctl config get-contexts", local=True)
def config_get_contexts(args, out: Output):
    data = _config.load()
    rows = [
        {
            "current": name == data.get("current-context"),
            "name": name,
            "baseUrl": ctx.get("base-url", ""),
            "namespace": ctx.get("namespace", ""),
            "credential": bool(ctx.get("api-key")),
        }
        for name, ctx in sorted(data["contexts"].items())
    ]
    if out.format in ("json", "yaml"):
        out.data(rows)
        return
    out.table(
        [["CURRENT", "NAME", "BASE URL", "NAMESPACE", "CREDENTIAL"]]
        + [
            [
                "*" if r["current"] else "",
                r["name"],
                r["baseUrl"],
                r["namespace"] or "-",
                "yes" if r["credential"] else "no",
            ]
            for r in rows
        ]
    )


@command("config current-context", "print the current context's name", "cpctl config current-context", local=True)
def config_current_context(args, out: Output):
    name = _config.load().get("current-context", "")
    if not name:
        raise UsageError("current-context: none set; `cpctl config use-context NAME`")
    print(name, file=out.out)


@command(
    "config delete-context",
    "delete a context",
    "cpctl config delete-context old",
    lambda p: p.add_argument("name"),
    local=True,
)
def config_delete_context(args, out: Output):
    data = _config.load()
    if data["contexts"].pop(args.name, None) is None:
        raise UsageError(f"delete-context: no context {args.name!r}")
    if data.get("current-context") == args.name:
        data.pop("current-context")
    _config.save(data)


@command(
    "completion",
    "print the shell completion script for bash, zsh or fish",
    'eval "$(cpctl completion bash)"   # in ~/.bashrc',
    lambda p: p.add_argument("shell", choices=("bash", "zsh", "fish")),
    local=True,
)
def cmd_completion(args, out: Output):
    out.out.write(argcomplete.shellcode(["cpctl"], shell=args.shell))


# ---- the parser ------------------------------------------------------------------------------


class _Help(argparse.RawDescriptionHelpFormatter):
    pass


def _version() -> str:
    from . import __version__

    return f"cpctl {__version__}"


def build_parser() -> argparse.ArgumentParser:
    codes = ", ".join(
        f"{n} {' / '.join(c for c, v in EXIT_CODES.items() if v == n)}" for n in sorted(set(EXIT_CODES.values()))
    )
    parser = argparse.ArgumentParser(
        prog="cpctl",
        formatter_class=_Help,
        description="Work with the container platform's control plane. The options below may also follow the "
        "command.\n\nexample:\n  cpctl jobs ls -o wide",
        epilog=f"exit codes: 0 ok, 1 other error, {USAGE} usage, {codes}\n"
        "credentials: flags, then CP_BASE_URL / CP_API_KEY / CP_NAMESPACE, then the context, then `cpctl login`",
    )
    parser.add_argument("--version", action="version", version=_version())
    parser.add_argument("--base-url", default=None, help="API address (default: CP_BASE_URL, else the context)")
    parser.add_argument(
        "--api-key", default=None, help="cpk_ key or bearer token; prefer CP_API_KEY, argv is visible to `ps`"
    )
    parser.add_argument(
        "--namespace", "-n", default=None, help="namespace to act in (default: the credential's only one)"
    )
    parser.add_argument(
        "--context", default=None, help="context from the config file (default: CPCTL_CONTEXT, else current)"
    )
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per call (Connect-Timeout-Ms)")
    parser.add_argument("--output", "-o", choices=FORMATS, default="table", help="table (default), wide, json, yaml")
    parser.add_argument("--json", dest="output", action="store_const", const="json", help="same as -o json")
    parsers = {(): parser.add_subparsers(dest="command", required=True, metavar="COMMAND")}
    for cmd in COMMANDS:
        for depth in range(1, len(cmd.path)):
            group = cmd.path[:depth]
            if group not in parsers:
                description = GROUPS[" ".join(group)]
                group_parser = parsers[group[:-1]].add_parser(
                    group[-1],
                    help=description,
                    description=f"{description}\n\nexample:\n  {cmd.example}",  # its first command's
                    formatter_class=_Help,
                )
                parsers[group] = group_parser.add_subparsers(dest=f"verb{depth}", required=True, metavar="COMMAND")
        sub = parsers[cmd.path[:-1]].add_parser(
            cmd.path[-1],
            help=cmd.help,
            description=f"{cmd.help}\n\nexample:\n  {cmd.example}",
            formatter_class=_Help,
        )
        cmd.arguments(sub)
        sub.set_defaults(cmd=cmd)
    return parser


# ---- main ------------------------------------------------------------------------------------


def _credentials(args) -> tuple[str, str, str | None]:
    try:
        _, context = _config.current(args.context or os.environ.get("CPCTL_CONTEXT"))
    except KeyError as exc:
        defined = ", ".join(_config.load()["contexts"]) or "none"
        raise UsageError(
            f"--context: no context {exc.args[0]!r} in {_config.config_path()}; defined: {defined}"
        ) from None
    token = args.api_key or os.environ.get("CP_API_KEY", "") or context.get("api-key", "")
    stored_base = ""
    if not token:
        token, record = bearer()
        stored_base = record.get("base_url", "")
    base_url = args.base_url or os.environ.get("CP_BASE_URL", "") or context.get("base-url", "") or stored_base
    if not base_url:
        raise UsageError("--base-url: required (or set CP_BASE_URL, or `cpctl config set-context`)")
    namespace = args.namespace or os.environ.get("CP_NAMESPACE") or context.get("namespace") or None
    return base_url, token, namespace


def run(args, out: Output) -> None:
    cmd: Command = args.cmd
    if cmd.local:
        cmd.run(args, out)
        return
    base_url, token, namespace = _credentials(args)
    if cmd.admin:
        client = AdminClient(base_url, token, timeout=args.timeout)
    else:
        client = Client(base_url, token, namespace=namespace, timeout=args.timeout)
    with client:
        if cmd.raw:
            cmd.run(client, args, out)
            return
        result = cmd.run(client, args)
        if isinstance(result, Message):
            if result.ByteSize() or out.format in ("json", "yaml"):  # an empty acknowledgement prints nothing
                out.one(result, cmd.view)
        elif isinstance(result, str):
            if out.format in ("json", "yaml"):
                out.data({"value": result})
            else:
                print(result, file=out.out)
        elif result is not None:
            out.rows(result, cmd.view)


GLOBAL_VALUE_FLAGS = ("--base-url", "--api-key", "--namespace", "-n", "--context", "--timeout", "--output", "-o")


def hoist_global_flags(argv: list[str]) -> list[str]:
    """Lets the global flags stand anywhere (`cpctl jobs ls -o json`), not only first; never
    past `--`, where the job's own command begins."""
    front, rest = [], []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest += argv[i:]
            break
        if arg == "--json" or arg.startswith(tuple(f"{f}=" for f in GLOBAL_VALUE_FLAGS if f.startswith("--"))):
            front.append(arg)
        elif arg in GLOBAL_VALUE_FLAGS and i + 1 < len(argv) and not _own_flag(rest, arg):
            front += [arg, argv[i + 1]]
            i += 1
        else:
            rest.append(arg)
        i += 1
    return front + rest


def _own_flag(words: list[str], flag: str) -> bool:
    """`config set-context --base-url/--namespace` set the context's own values;
    `admin runners issue --namespace` limits the runner."""
    if words[:3] == ["admin", "runners", "issue"]:
        return flag == "--namespace"
    return flag in ("--base-url", "--namespace") and words[:2] == ["config", "set-context"]


def _redact(text: str, secret: str) -> str:
    return text.replace(secret, "[credential]") if secret else text


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argcomplete.autocomplete(parser)  # answers the shell's completion request and exits
    argv = hoist_global_flags(sys.argv[1:] if argv is None else argv)
    # Everything after `--` is the job's command, options included (argparse would not
    # hand them to a positional that already matched nothing).
    tail = argv[argv.index("--") + 1 :] if "--" in argv else None
    args = parser.parse_args(argv[: argv.index("--")] if tail is not None else argv)
    if tail is not None:
        if getattr(args, "cmd", None) is None or args.cmd.path != ("jobs", "run"):
            parser.error("`--` is only for `cpctl jobs run IMAGE -- CMD…`")
        args.command_args = [*args.command_args, *tail]
    out = Output(args.output)
    secret = (args.api_key or os.environ.get("CP_API_KEY", "")).strip()
    try:
        run(args, out)
    except errors.Error as exc:
        print(_redact(f"cpctl: {exc.code}: {exc.message}", secret), file=sys.stderr)
        for violation in exc.field_violations:
            print(f"  field {violation.field}: {violation.description}", file=sys.stderr)
        for violation in exc.quota_violations:
            print(f"  quota {violation.subject}: {violation.description}", file=sys.stderr)
        return EXIT_CODES.get(exc.code, 1)
    except UsageError as exc:
        print(f"cpctl: {exc}", file=sys.stderr)
        return USAGE
    except LoginError as exc:
        print(f"cpctl: {exc}", file=sys.stderr)
        return EXIT_CODES["unauthenticated"]
    except (ValueError, TypeError) as exc:  # a ConfigurationError: no single namespace, a bad URL or key
        print(_redact(f"cpctl: {exc}", secret), file=sys.stderr)
        return USAGE
    except BrokenPipeError:  # `cpctl uploads ls … | head`
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
