"""The path of one ListUploads call through the code: which modules it stops in, in order.

    .venv/bin/python bench/list_uploads_path.py

Serves one ListUploads (a bucket by name, a metadata filter, a cursor from the page before) in
process on a throwaway SQLite database, tracing calls into the uploads app and the RPC runtime's
helpers it uses, from the permission check to the response object. A "stop" is a run of calls
in one module; the path counts its stops, its modules, and how often it comes back to a module
it already left. It counts code structure, not time: the figures do not depend on the machine.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATABASE = Path(tempfile.mkdtemp()) / "path.sqlite3"
atexit.register(shutil.rmtree, DATABASE.parent, ignore_errors=True)
os.environ.update(DJANGO_SETTINGS_MODULE="controlplane.settings", DEBUG="true", DATABASE_URL=f"sqlite:///{DATABASE}")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402

from apikeys.services import issue_api_key  # noqa: E402
from controlplane.auth import Principal, Role  # noqa: E402
from namespaces.services import create_namespace  # noqa: E402
from uploads.services import create_bucket, seed_uploads  # noqa: E402

URL = "/uploads.api.v1.BucketUploadsService/ListUploads"
# Where the path is traced: the uploads app (not its generated code) and the runtime helpers it calls.
# (The per-call memo of looked-up rows was in controlplane.rpc.context before controlplane.lookups.)
TRACED = (
    "uploads.",
    "controlplane.rpc.pagination",
    "controlplane.rpc.codecs",
    "controlplane.rpc.context",
    "controlplane.lookups",
)
SKIPPED = ("uploads.api.", "uploads.models", "uploads.migrations")
# Not stops: anonymous code, constructors (dataclasses), and what the runtime does for every call
# (opening it, binding it, the memo's scope).
SKIPPED_FUNCTIONS = ("<lambda>", "<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>", "__init__", "per_call")
SKIPPED_FUNCTIONS += ("serving", "bind", "current_call", "bound_call", "call_of", "principal_of")


def main() -> None:
    call_command("migrate", verbosity=0)
    system = Principal.system("path")
    create_namespace(actor=system, name="team")
    bucket = create_bucket(actor=system, namespace="team", name="b")
    seed_uploads(actor=system, bucket=bucket, count=20, seed=1)
    _, key = issue_api_key(actor=system, namespace="team", name="path", role=Role.VIEWER)
    client = Client(HTTP_HOST="localhost", HTTP_AUTHORIZATION=f"Bearer {key}")
    body = {"bucket": {"namespace": "team", "name": "b"}, "pageSize": 3}
    body["metadataFilters"] = [{"key": "status", "stringValue": "draft"}]
    first = _call(client, body)
    body["cursor"] = first.get("nextCursor", "")
    calls = []
    sys.setprofile(lambda frame, event, arg: _record(calls, frame, event))
    try:
        _call(client, body)
    finally:
        sys.setprofile(None)
    stops = _stops(calls)
    modules = list(dict.fromkeys(module for module, _ in stops))
    print(f"ListUploads: {len(calls)} calls, {len(stops)} stops in {len(modules)} modules, ", end="")
    print(f"coming back {len(stops) - len(modules)} times")
    handler = next(i for i, (module, _) in enumerate(stops) if module == "uploads.rpc")
    handled = stops[handler:]
    print(f"  of which the handler: {len(handled)} stops in {len(set(m for m, _ in handled))} modules")
    for module, functions in stops:
        print(f"  {module:<32} {', '.join(dict.fromkeys(functions))}")


def _call(client: Client, body: dict) -> dict:
    response = client.post(URL, json.dumps(body), content_type="application/json")
    assert response.status_code == 200, response.content[:300]
    return response.json()


def _record(calls: list, frame, event: str) -> None:
    if event != "call":
        return
    module = frame.f_globals.get("__name__", "")
    if module.startswith(TRACED) and not module.startswith(SKIPPED) and frame.f_code.co_name not in SKIPPED_FUNCTIONS:
        calls.append((module, frame.f_code.co_name))


def _stops(calls: list) -> list[tuple[str, list[str]]]:
    stops: list[tuple[str, list[str]]] = []
    for module, function in calls:
        if stops and stops[-1][0] == module:
            stops[-1][1].append(function)
        else:
            stops.append((module, [function]))
    return stops


if __name__ == "__main__":
    main()
