"""cpctl: the command line over the SDK. Tables by default, `--json` for machines.

Exit codes follow the error class (see EXIT_CODES); a usage error is 2. Messages go to
stderr and name the field the server (or cpctl) objected to.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from collections.abc import Callable, Iterable

from google.protobuf import json_format
from google.protobuf.message import Message

from . import errors
from .cli_streams import with_streams
from .client import AdminClient, Client
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
CHUNK = 50  # rows rendered together, so long listings stream page by page


class UsageError(Exception):
    """Bad command-line input, caught before any call; the message names the flag."""


# ---- output ------------------------------------------------------------------------------


def as_dict(message: Message) -> dict:
    return json_format.MessageToDict(message)


def _cell(value) -> str:
    if isinstance(value, list):
        return ",".join(_cell(v) for v in value)
    if isinstance(value, dict) and "oidcGroup" in value:  # a group binding
        return f"{value['oidcGroup']}={value.get('role', '').removeprefix('ROLE_')}"
    if isinstance(value, dict):
        return ",".join(f"{k}={_cell(v)}" for k, v in value.items())
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


class Output:
    def __init__(self, json_mode: bool, out=None):
        self.json_mode = json_mode
        self.out = out or sys.stdout

    def one(self, message: Message, fields: list[tuple[str, str]]):
        data = as_dict(message)
        if self.json_mode:
            print(json.dumps(data, indent=2), file=self.out)
            return
        width = max(len(label) for label, _ in fields)
        for label, key in fields:
            print(f"{label:<{width}}  {_cell(data.get(key, ''))}", file=self.out)

    def rows(self, messages: Iterable[Message], columns: list[tuple[str, str]]):
        """JSON Lines or a table, written a chunk at a time as pages arrive."""
        widths = [len(header) for header, _ in columns]
        header_done = False
        iterator = iter(messages)
        while chunk := [as_dict(m) for m in itertools.islice(iterator, CHUNK)]:
            if self.json_mode:
                for data in chunk:
                    print(json.dumps(data), file=self.out)
                self.out.flush()
                continue
            cells = [[_cell(d.get(key, "")) for _, key in columns] for d in chunk]
            widths = [max(w, *(len(row[i]) for row in cells)) for i, w in enumerate(widths)]
            if not header_done:
                self._line([h for h, _ in columns], widths)
                header_done = True
            for row in cells:
                self._line(row, widths)
            self.out.flush()
        if not header_done and not self.json_mode:
            self._line([h for h, _ in columns], widths)

    def _line(self, cells: list[str], widths: list[int]):
        print("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip(), file=self.out)


JOB = [("JOB", "jobId"), ("STATE", "state"), ("IMAGE", "image"), ("COMMAND", "command"), ("CREATED", "createTime")]
SANDBOX = [("SANDBOX", "sandboxId"), ("IMAGE", "image"), ("WORKSPACE", "workspaceId"), ("CREATED", "createTime")]
WORKSPACE = [("WORKSPACE", "workspaceId"), ("NAME", "name"), ("CREATED", "createTime")]
ENVIRONMENT = [("ENVIRONMENT", "environmentId"), ("NAME", "name"), ("IMAGE", "image"), ("STATE", "state")]
GRANT = [("GRANT", "grantId"), ("TARGET", "target"), ("KIND", "kind"), ("CREATED", "createTime")]
EVENT = [
    ("TIME", "eventTime"),
    ("KIND", "kind"),
    ("TARGET", "target"),
    ("SANDBOX", "sandboxId"),
    ("ALLOWED", "allowed"),
]
UPLOAD = [("UPLOAD", "uploadId"), ("PATH", "path"), ("SLUG", "slug"), ("SIZE", "sizeBytes"), ("CREATED", "createdAt")]
NAMESPACE = [("NAMESPACE", "namespace"), ("GROUPS", "groups"), ("CREATED", "createTime")]
KEY = [("KEY", "keyId"), ("NAME", "name"), ("NAMESPACE", "namespace"), ("ROLE", "role"), ("STATE", "state"),
       ("CREATED", "created"), ("LAST USED", "lastUsed")]  # fmt: skip


def _detail_fields(columns):
    return [(header.title(), key) for header, key in columns]


# ---- argument helpers --------------------------------------------------------------------


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


# ---- commands ----------------------------------------------------------------------------


def cmd_whoami(client: Client, args, out: Output):
    me = client.whoami()
    if out.json_mode:
        out.one(me, [])
        return
    data = as_dict(me)
    namespaces = [f"{n['namespace']}={n['role'].removeprefix('ROLE_')}" for n in data.get("namespaces", [])]
    for label, value in (
        ("subject", data.get("subject", "")),
        ("name", data.get("name", "")),
        ("kind", data.get("kind", "")),
        ("admin", "yes" if data.get("admin") else "no"),
        ("namespaces", ", ".join(namespaces) or "-"),
        ("scopes", " ".join(data.get("scopes", [])) or "-"),
    ):
        print(f"{label:<10}  {value}", file=out.out)


def _resource_commands(sub, name: str, columns, verbs: dict[str, Callable]):
    parser = sub.add_parser(name, help=f"{name} of the namespace")
    verbs_parser = parser.add_subparsers(dest="verb", required=True)
    for verb, (setup, action, *own_columns) in verbs.items():
        verb_parser = verbs_parser.add_parser(verb)
        setup(verb_parser)
        verb_parser.set_defaults(action=action, columns=own_columns[0] if own_columns else columns)


def _id(parser):
    parser.add_argument("id")


def _page(parser):
    parser.add_argument("--page-size", type=int, default=0, help="items per request (the server caps it)")


def _none(parser):
    pass


def build_parser() -> argparse.ArgumentParser:
    codes = ", ".join(
        f"{n} {' / '.join(c for c, v in EXIT_CODES.items() if v == n)}" for n in sorted(set(EXIT_CODES.values()))
    )
    parser = argparse.ArgumentParser(
        prog="cpctl",
        description="Container platform control plane CLI. The options below may also follow the command.",
        epilog=f"exit codes: 0 ok, 1 other error, {USAGE} usage, {codes}",
    )
    parser.add_argument("--base-url", default=None, help="API address (default: CP_BASE_URL)")
    parser.add_argument("--api-key", default=None, help="cpk_ key or bearer token (default: CP_API_KEY, else login)")
    parser.add_argument("--namespace", default=None, help="namespace to act in (default: the credential's only one)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per call (Connect-Timeout-Ms)")
    parser.add_argument("--json", action="store_true", help="JSON output (one object per line for listings)")
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("whoami", help="the principal the API resolves this credential to").set_defaults(
        action=cmd_whoami, raw=True
    )

    def jobs_run(p):
        p.add_argument("image")
        p.add_argument("cmd", nargs="*", metavar="-- CMD")
        p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE")

    _resource_commands(sub, "jobs", JOB, with_streams({
        "run": (jobs_run, lambda c, a: c.jobs.run(a.image, command=a.cmd, env=dict(_pairs(a.env, "--env")))),
        "ls": (_page, lambda c, a: c.jobs.list(page_size=a.page_size)),
        "get": (_id, lambda c, a: c.jobs.get(a.id)),
        "cancel": (_id, lambda c, a: c.jobs.cancel(a.id)),
    }, as_dict))  # fmt: skip  # ls -w, logs [-f], run --wait: cli_streams.py

    def sandbox_create(p):
        p.add_argument("image")
        p.add_argument("--workspace", default="", metavar="WORKSPACE_ID")

    _resource_commands(sub, "sandboxes", SANDBOX, {
        "create": (sandbox_create, lambda c, a: c.sandboxes.create(a.image, workspace_id=a.workspace)),
        "ls": (_page, lambda c, a: c.sandboxes.list(page_size=a.page_size)),
        "get": (_id, lambda c, a: c.sandboxes.get(a.id)),
        "delete": (_id, lambda c, a: c.sandboxes.delete(a.id)),
        "preview-url": (_id, lambda c, a: c.sandboxes.preview_url(a.id)),
        "app-key": (_id, lambda c, a: c.sandboxes.app_key(a.id)),
    })  # fmt: skip

    _resource_commands(sub, "workspaces", WORKSPACE, {
        "create": (lambda p: p.add_argument("name"), lambda c, a: c.workspaces.create(a.name)),
        "ls": (_page, lambda c, a: c.workspaces.list(page_size=a.page_size)),
        "get": (_id, lambda c, a: c.workspaces.get(a.id)),
        "delete": (_id, lambda c, a: c.workspaces.delete(a.id)),
    })  # fmt: skip

    def env_register(p):
        p.add_argument("name")
        p.add_argument("image")

    _resource_commands(sub, "environments", ENVIRONMENT, {
        "register": (env_register, lambda c, a: c.environments.register(a.name, a.image)),
        "ls": (_page, lambda c, a: c.environments.list(page_size=a.page_size)),
        "get": (_id, lambda c, a: c.environments.get(a.id)),
        "build": (_id, lambda c, a: c.environments.build(a.id)),
    })  # fmt: skip

    _resource_commands(sub, "egress", GRANT, {
        "grant": (lambda p: p.add_argument("target"), lambda c, a: c.egress.grant(a.target)),
        "ls": (_page, lambda c, a: c.egress.list(page_size=a.page_size)),
        "revoke": (_id, lambda c, a: c.egress.revoke(a.id)),
        "events": (_page, lambda c, a: c.egress.events(page_size=a.page_size), EVENT),
    })  # fmt: skip

    uploads = sub.add_parser("uploads", help="uploads of a bucket").add_subparsers(dest="verb", required=True)
    ls = uploads.add_parser("ls", help="list uploads, streaming page after page")
    ls.add_argument("bucket", nargs="?", default=None, metavar="NS/BUCKET", help="or BUCKET in --namespace")
    ls.add_argument("--tag", action="append", default=[], help="carrying this tag (repeatable: all of them)")
    ls.add_argument("--slug", default="", help="case-insensitive slug prefix")
    ls.add_argument("--path", default="", help="this path or below it")
    ls.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE", help="or KEY:=true|false")
    ls.add_argument("--sort", default="", help="created_at (default), updated_at, slug, size_bytes, order")
    ls.add_argument("--asc", action="store_true", help="ascending (default descending)")
    ls.add_argument("--limit", type=int, default=0, help="stop after N uploads")
    ls.add_argument("--page-size", type=int, default=0)
    ls.set_defaults(action=uploads_ls, columns=UPLOAD)

    build_admin(sub)

    login_parser = sub.add_parser("login", help="sign in through the identity provider (OIDC, PKCE)")
    login_parser.add_argument("--issuer", default=os.environ.get("CP_OIDC_ISSUER", ""))
    login_parser.add_argument("--client-id", default=os.environ.get("CP_OIDC_CLIENT_ID", "cpctl"))
    login_parser.add_argument("--resource", default=os.environ.get("CP_OIDC_RESOURCE", ""), help="the API's audience")
    login_parser.add_argument("--scope", default=os.environ.get("CP_OIDC_SCOPE", LoginSettings.scope))
    login_parser.add_argument("--no-browser", action="store_true", help="print the address only")
    login_parser.add_argument("--wait", type=float, default=300, help="seconds to wait for the browser")
    login_parser.set_defaults(action=cmd_login, local=True)
    sub.add_parser("logout", help="forget the stored sign-in").set_defaults(action=cmd_logout, local=True)
    return parser


def uploads_ls(client: Client, args):
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


def build_admin(sub):
    admin = sub.add_parser("admin", help="NamespaceService (admin credentials only)")
    groups = admin.add_subparsers(dest="group", required=True)

    ns = groups.add_parser("ns", help="namespaces").add_subparsers(dest="verb", required=True)
    create = ns.add_parser("create")
    create.add_argument("name")
    create.add_argument("--bind", action="append", default=[], metavar="GROUP=ROLE")
    create.set_defaults(action=lambda c, a: c.create_namespace(a.name, groups=_bindings(a.bind)), columns=NAMESPACE)
    get = ns.add_parser("get")
    get.add_argument("name")
    get.set_defaults(action=lambda c, a: c.get_namespace(a.name), columns=NAMESPACE)
    ls = ns.add_parser("ls")
    _page(ls)
    ls.set_defaults(action=lambda c, a: c.list_namespaces(page_size=a.page_size), columns=NAMESPACE)
    bindings = ns.add_parser("bindings", help="group → role bindings").add_subparsers(dest="bindings", required=True)
    set_ = bindings.add_parser("set", help="replace every binding of the namespace (full replace)")
    set_.add_argument("name")
    set_.add_argument("bind", nargs="*", metavar="GROUP=ROLE")
    set_.add_argument("--clear", action="store_true", help="remove every binding")
    set_.set_defaults(action=bindings_set, columns=NAMESPACE)

    keys = groups.add_parser("keys", help="API keys").add_subparsers(dest="verb", required=True)
    issue = keys.add_parser("issue", help="prints the plaintext alone on stdout (shown once)")
    issue.add_argument("namespace")
    issue.add_argument("--name", required=True)
    issue.add_argument("--role", required=True, help="VIEWER, OPERATOR or ADMIN")
    issue.set_defaults(action=keys_issue, raw=True)
    ls = keys.add_parser("ls")
    ls.add_argument("namespace", nargs="?", default="")
    _page(ls)
    ls.set_defaults(action=lambda c, a: c.list_api_keys(a.namespace, page_size=a.page_size), columns=KEY)
    revoke = keys.add_parser("revoke")
    revoke.add_argument("key_id")
    revoke.set_defaults(action=lambda c, a: c.revoke_api_key(a.key_id), columns=[])


def bindings_set(client: AdminClient, args):
    if args.clear == bool(args.bind):
        raise UsageError("bindings set: give GROUP=ROLE pairs or --clear (not both, not neither)")
    return client.update_namespace(args.name, groups=[] if args.clear else _bindings(args.bind))


def keys_issue(client: AdminClient, args, out: Output):
    try:
        role = Role.parse(args.role)
    except ValueError as exc:
        raise UsageError(f"--role: {exc}") from None
    issued = client.issue_api_key(args.namespace, args.name, role)
    if out.json_mode:
        print(json.dumps({"key": as_dict(issued.key), "plaintext": issued.plaintext}, indent=2), file=out.out)
        return
    key = issued.key
    print(
        f"issued {key.key_id} ({Role(key.role).name} in {key.namespace}); store the key now, it is shown once",
        file=sys.stderr,
    )
    print(issued.plaintext, file=out.out)


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


def cmd_logout(args, out: Output):
    print("signed out" if forget_token() else "not signed in", file=sys.stderr)


# ---- main --------------------------------------------------------------------------------


def _credentials(args) -> tuple[str, str]:
    token = args.api_key or os.environ.get("CP_API_KEY", "")
    stored_base = ""
    if not token:
        token, record = bearer()
        stored_base = record.get("base_url", "")
    base_url = args.base_url or os.environ.get("CP_BASE_URL", "") or stored_base
    if not base_url:
        raise UsageError("--base-url: required (or set CP_BASE_URL), e.g. http://127.0.0.1:8000")
    return base_url, token


def run(args, out: Output) -> None:
    if getattr(args, "local", False):
        args.action(args, out)
        return
    base_url, token = _credentials(args)
    if args.command == "admin":
        client = AdminClient(base_url, token, timeout=args.timeout)
    else:
        client = Client(base_url, token, namespace=args.namespace, timeout=args.timeout)
    with client:
        if getattr(args, "raw", False):
            args.action(client, args, out)
            return
        result = args.action(client, args)
        if isinstance(result, Message):
            if out.json_mode or result.ByteSize():  # an empty acknowledgement prints nothing
                out.one(result, _detail_fields(args.columns))
        elif isinstance(result, str):
            print(json.dumps({"value": result}) if out.json_mode else result, file=out.out)
        elif result is not None:
            out.rows(result, args.columns)


GLOBAL_VALUE_FLAGS = ("--base-url", "--api-key", "--namespace", "--timeout")


def hoist_global_flags(argv: list[str]) -> list[str]:
    """Lets the global flags stand anywhere (`cpctl jobs ls --json`), not only first; never
    past `--`, where the job's own command begins."""
    front, rest = [], []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest += argv[i:]
            break
        if arg == "--json" or arg.startswith(tuple(f"{f}=" for f in GLOBAL_VALUE_FLAGS)):
            front.append(arg)
        elif arg in GLOBAL_VALUE_FLAGS and i + 1 < len(argv):
            front += [arg, argv[i + 1]]
            i += 1
        else:
            rest.append(arg)
        i += 1
    return front + rest


def main(argv: list[str] | None = None) -> int:
    argv = hoist_global_flags(sys.argv[1:] if argv is None else argv)
    # Everything after `--` is the job's command, options included (argparse would not
    # hand them to a positional that already matched nothing).
    tail = argv[argv.index("--") + 1 :] if "--" in argv else None
    parser = build_parser()
    args = parser.parse_args(argv[: argv.index("--")] if tail is not None else argv)
    if tail is not None:
        if not hasattr(args, "cmd"):
            parser.error("`--` is only for `cpctl jobs run IMAGE -- CMD…`")
        args.cmd = [*args.cmd, *tail]
    out = Output(args.json)
    try:
        run(args, out)
    except errors.Error as exc:
        print(f"cpctl: {exc.code}: {exc.message}", file=sys.stderr)
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
    except ValueError as exc:  # e.g. no single namespace to act in
        print(f"cpctl: {exc}", file=sys.stderr)
        return USAGE
    except BrokenPipeError:  # `cpctl uploads ls … | head`
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
