"""Interoperability with the stock Node client: @connectrpc/connect-node 2.x, unmodified.

Code comes from @bufbuild/protoc-gen-es through `buf generate` (both from node_modules, no
network), generated at test time into a git-ignored directory, so it can never be stale.
tests/support/node/driver.mjs runs every call of a plan with one transport and prints what it saw;
one node process per protocol variant, against the real gunicorn on loopback:

- Connect and gRPC-Web, each over JSON and binary, each plain and gzipped both ways;
- connect-node's default HTTP/1.1 transport, which streams request bodies chunked (no
  Content-Length), observed on the wire through node's http diagnostics channel;
- large chunked bodies: refused early (401) and over the size limit, seen by the client as
  Connect errors, with the next call on the same transport working.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import urllib.parse
from datetime import timedelta
from pathlib import Path

import google.rpc
import pytest

from apikeys.services import issue_api_key, revoke_api_key
from controlplane.auth import Role
from namespaces.services import create_namespace
from tests.conftest import ROOT, SYSTEM
from tests.support.uploads_factory import LIST, T0, add, bool_kv, iso, make_bucket, record, string_kv
from workloads.services.jobs import run_job

pytestmark = pytest.mark.e2e

NODE_DIR = ROOT / "tests" / "support" / "node"
NAMESPACES = "containers.api.v1.NamespaceService"
JOBS = "containers.api.v1.JobService"
LARGE = 1024 * 1024  # well past what gunicorn drains on its own (64 KiB)
OVER_LIMIT = 4 * 1024 * 1024 + 1  # RPC_MAX_REQUEST_BYTES's default is 4 MiB
TIMEOUT_MS = 30_000  # every call's deadline: generous, so a slow machine does not fail the test
VARIANTS = [
    *(
        pytest.param(protocol, binary, gzip, False, id=f"{protocol}-{'binary' if binary else 'json'}{'-gzip' * gzip}")
        for protocol in ("connect", "grpcweb")
        for binary in (False, True)
        for gzip in (False, True)
    ),
    # useHttpGet: Get*/List* (NO_SIDE_EFFECTS) as Connect GET, the others still POST.
    pytest.param("connect", False, False, True, id="connect-json-get"),
    pytest.param("connect", True, False, True, id="connect-binary-get"),
]
# Methods the client must call with GET when asked to: those marked NO_SIDE_EFFECTS.
READ_ONLY_PREFIXES = ("Get", "List")


@pytest.fixture(scope="module")
def generated_es():
    """protoc-gen-es output for proto/ and google/rpc/error_details.proto (for BadRequest).

    Under var/ rather than /tmp: node resolves the generated imports (@bufbuild/protobuf)
    from the project's node_modules by walking up from the generated files.
    """
    (ROOT / "var").mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="node-es-", dir=ROOT / "var"))
    source, out = work / "proto", work / "gen"
    shutil.copytree(ROOT / "proto", source)
    # error_details.proto as shipped by the pinned googleapis-common-protos.
    (source / "google" / "rpc").mkdir(parents=True)
    shutil.copy(Path(google.rpc.__path__[0]) / "error_details.proto", source / "google" / "rpc")
    subprocess.run(
        [str(ROOT / "node_modules" / ".bin" / "buf"), "generate", str(source),
         "--template", str(NODE_DIR / "buf.gen.yaml"), "--output", str(out)],
        cwd=ROOT, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    # The generated .js files are ES modules; the project's package.json does not say so.
    (out / "package.json").write_text('{"type": "module"}\n')
    assert (out / "google" / "rpc" / "error_details_pb.js").exists()
    yield out
    shutil.rmtree(work, ignore_errors=True)


def run_plan(generated_es, base_url: str, calls: list[dict], **variant) -> dict:
    plan = {"baseUrl": base_url, "gen": str(generated_es), "timeoutMs": TIMEOUT_MS, **variant}
    result = subprocess.run(
        ["node", str(NODE_DIR / "driver.mjs")],
        input=json.dumps({**plan, "calls": calls}), cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["results"]


# --- the world the calls run against ----------------------------------------------------------


def upload_records() -> list[dict]:
    """40 uploads whose tags, slugs, metadata, sizes and times vary independently; no two
    share a size or an update time, so every sort has a single right answer."""
    records = []
    for n in range(1, 41):
        tags = (["red"] if n % 2 == 0 else []) + (["blue"] if n % 3 == 0 else [])
        slug = f"FILE-{n:04d}" if n % 5 == 0 else (f"file-{n:04d}" if n % 7 else f"report-{n:04d}")
        created = T0 + timedelta(hours=n)
        records.append(
            record(
                n,
                slug=slug,
                tags=tags,
                sizeBytes=str((n * 37) % 101),
                updatedAt=iso(T0 + timedelta(days=40, minutes=(n * 53) % 97)),
                createdAt=iso(created),
                metadataKvs=[string_kv("team", "core" if n % 4 in (0, 1) else "edge"), bool_kv("flag", n % 3 == 1)],
            )
        )
    return records


def walk_expectations(records: list[dict]) -> dict[str, tuple[dict, list[str]]]:
    """Name → (ListUploads request, the upload ids a full walk must return, in order)."""

    def team(r):
        return next(kv["value"]["stringValue"] for kv in r["metadataKvs"] if kv["key"] == "team")

    def flag(r):
        return next(kv["value"]["boolValue"] for kv in r["metadataKvs"] if kv["key"] == "flag")

    def ordered(selected, key, descending):
        keys = [key(r) for r in selected]
        assert len(set(keys)) == len(keys), "test data must not tie on the sort key"
        return [r["uploadId"] for r in sorted(selected, key=key, reverse=descending)]

    tagged_core = [
        r for r in records if "red" in r["tags"] and r["slug"].lower().startswith("file-") and team(r) == "core"
    ]
    in_range = [
        r
        for r in records
        if not flag(r) and iso(T0 + timedelta(hours=5)) <= r["createdAt"] <= iso(T0 + timedelta(hours=30))
    ]
    return {
        "walk_all": ({"pageSize": 7}, ordered(records, lambda r: r["createdAt"], descending=True)),
        "walk_tags_slug_metadata_by_size": (
            {"tags": ["red"], "slug": "file-", "metadataFilters": [{"key": "team", "stringValue": "core"}],
             "sortBy": "size_bytes", "sortOrder": "asc", "pageSize": 3},
            ordered(tagged_core, lambda r: int(r["sizeBytes"]), descending=False),
        ),
        "walk_dates_bool_by_updated": (
            {"dateFrom": iso(T0 + timedelta(hours=5)), "dateTo": iso(T0 + timedelta(hours=30)),
             "metadataFilters": [{"key": "flag", "boolValue": False}], "sortBy": "updated_at", "pageSize": 4},
            ordered(in_range, lambda r: r["updatedAt"], descending=True),
        ),
    }  # fmt: skip


@pytest.fixture
def world(transactional_db):
    """Two namespaces with keys of every kind, a job in each, and a bucket of uploads in team-a."""
    for name in ("team-a", "team-b"):
        create_namespace(actor=SYSTEM, name=name)

    def key(namespace: str, role: Role) -> str:
        return issue_api_key(actor=SYSTEM, namespace=namespace, name=f"{role.name.lower()} key", role=role)[1]

    revoked, revoked_plaintext = issue_api_key(actor=SYSTEM, namespace="team-a", name="gone", role=Role.ADMIN)
    revoke_api_key(actor=SYSTEM, key_id=revoked.key_id)
    bucket = make_bucket("team-a", "docs")
    records = upload_records()
    add(bucket, records)
    return {
        "admin": key("team-a", Role.ADMIN),
        "operator": key("team-a", Role.OPERATOR),
        "viewer": key("team-a", Role.VIEWER),
        "revoked": revoked_plaintext,
        "job": run_job(actor=SYSTEM, namespace="team-a", image="alpine:3").job_id,
        "other_job": run_job(actor=SYSTEM, namespace="team-b", image="alpine:3").job_id,
        "bucket": {"bucketId": str(bucket.pk)},
        "other_bucket": {"bucketId": str(make_bucket("team-b", "docs").pk)},
        "walks": walk_expectations(records),
    }


def plan_calls(world: dict, created_namespace: str) -> list[dict]:
    def call(name, procedure, request, token=None, **extra):
        return {"name": name, "procedure": procedure, "request": request, "token": world.get(token), **extra}

    job_request = {"namespace": "team-a", "image": "python:3.12", "command": ["echo", "hi"], "env": {"MODE": "ci"}}
    calls = [
        # NamespaceService: admin only.
        call("ns_admin_get", f"{NAMESPACES}/GetNamespace", {"namespace": "team-a"}, "admin"),
        call("ns_admin_list_page", f"{NAMESPACES}/ListNamespaces", {"pageSize": 1}, "admin"),
        call("ns_admin_create", f"{NAMESPACES}/CreateNamespace",
             {"namespace": created_namespace, "groups": [{"oidcGroup": "devs", "role": "ROLE_OPERATOR"}],
              "quotas": {"maxSandboxes": 3}}, "admin"),
        call("ns_operator_get", f"{NAMESPACES}/GetNamespace", {"namespace": "team-a"}, "operator"),
        call("ns_viewer_issue", f"{NAMESPACES}/IssueApiKey",
             {"namespace": "team-a", "name": "x", "role": "ROLE_ADMIN"}, "viewer"),
        call("ns_missing_key", f"{NAMESPACES}/GetNamespace", {"namespace": "team-a"}),
        call("ns_revoked_key", f"{NAMESPACES}/GetNamespace", {"namespace": "team-a"}, "revoked"),
        call("ns_bad_name", f"{NAMESPACES}/CreateNamespace", {"namespace": "Bad_Name"}, "admin"),
        # JobService: reads need VIEWER, RunJob OPERATOR, and only in the key's namespace.
        call("job_run_operator", f"{JOBS}/RunJob", job_request, "operator"),
        call("job_run_viewer", f"{JOBS}/RunJob", job_request, "viewer"),
        call("job_get_viewer", f"{JOBS}/GetJob", {"jobId": world["job"]}, "viewer"),
        call("job_list_viewer", f"{JOBS}/ListJobs", {"namespace": "team-a", "pageSize": 1}, "viewer"),
        call("job_get_other_namespace", f"{JOBS}/GetJob", {"jobId": world["other_job"]}, "operator"),
        call("job_list_other_namespace", f"{JOBS}/ListJobs", {"namespace": "team-b"}, "viewer"),
        call("job_run_other_namespace", f"{JOBS}/RunJob", {**job_request, "namespace": "team-b"}, "operator"),
        call("job_bad_env", f"{JOBS}/RunJob", {**job_request, "env": {"1BAD": "x"}}, "operator"),
        # ListUploads: errors, then the cursor walks.
        call("uploads_other_namespace", LIST, {"bucket": world["other_bucket"]}, "viewer"),
        # POST even in the GET variants: as a GET, its ~14 KB URL exceeds gunicorn's request line limit.
        call("uploads_too_many_tags", LIST,
             {"bucket": world["bucket"], "tags": [f"t{i}" for i in range(1001)]}, "viewer", post=True),
        call("uploads_negative_page_size", LIST, {"bucket": world["bucket"], "pageSize": -1}, "viewer"),
        # Large chunked bodies: refused before the body is read (no credential), and over the
        # size limit (also once inflated, in the gzip variants); the client must see the error.
        call("large_body_no_credential", f"{NAMESPACES}/CreateNamespace", {"namespace": "p" * LARGE}),
        call("over_size_limit", f"{NAMESPACES}/CreateNamespace", {"namespace": "p" * OVER_LIMIT}, "admin"),
        call("after_large_bodies", f"{NAMESPACES}/GetNamespace", {"namespace": "team-a"}, "admin"),
    ]  # fmt: skip
    for name, (request, _) in world["walks"].items():
        calls.append(call(name, LIST, {"bucket": world["bucket"], **request}, "viewer", walk=True))
    return calls


def ok(result: dict) -> dict:
    assert "ok" in result, result.get("error")
    return result["ok"]


def error(result: dict) -> dict:
    assert "error" in result, result.get("ok")
    return result["error"]


def bad_request_fields(result: dict) -> list[list[str]]:
    return [[violation["field"] for violation in detail] for detail in error(result)["badRequest"]]


# --- the test -------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol, binary, gzip, get", VARIANTS)
def test_connect_node_client(live_service, generated_es, world, protocol, binary, gzip, get):
    created_namespace = f"node-{protocol}-{int(binary)}{int(gzip)}{int(get)}"
    calls = plan_calls(world, created_namespace)
    results = run_plan(generated_es, live_service.url, calls, protocol=protocol, binary=binary, gzip=gzip, get=get)

    # NamespaceService.
    assert ok(results["ns_admin_get"])["namespace"] == "team-a"
    page = ok(results["ns_admin_list_page"])
    assert len(page["namespaces"]) == 1 and page["nextPageToken"]  # the page size was read
    created = ok(results["ns_admin_create"])
    assert created["namespace"] == created_namespace
    assert created["groups"] == [{"oidcGroup": "devs", "role": "ROLE_OPERATOR"}]
    assert created["quotas"] == {"maxSandboxes": 3}
    assert error(results["ns_operator_get"])["code"] == "permission_denied"
    assert error(results["ns_viewer_issue"])["code"] == "permission_denied"
    missing = error(results["ns_missing_key"])
    assert missing["code"] == "unauthenticated" and "credential is required" in missing["message"]
    assert error(results["ns_revoked_key"]) == {
        "code": "unauthenticated",
        "message": "API key has been revoked",
        "badRequest": [],
    }
    assert error(results["ns_bad_name"])["code"] == "invalid_argument"
    assert bad_request_fields(results["ns_bad_name"]) == [["namespace"]]

    # JobService.
    job = ok(results["job_run_operator"])["job"]
    assert (job["namespace"], job["image"], job["state"]) == ("team-a", "python:3.12", "JOB_STATE_QUEUED")
    assert (job["command"], job["env"]) == (["echo", "hi"], {"MODE": "ci"})
    assert error(results["job_run_viewer"])["code"] == "permission_denied"
    assert ok(results["job_get_viewer"])["job"]["jobId"] == world["job"]
    listed = ok(results["job_list_viewer"])
    assert [j["jobId"] for j in listed["jobs"]] == [job["jobId"]] and listed["nextPageToken"]  # newest first
    for name in ("job_get_other_namespace", "job_list_other_namespace", "job_run_other_namespace"):
        assert error(results[name])["code"] == "permission_denied", name
    assert error(results["job_bad_env"])["code"] == "invalid_argument"
    assert bad_request_fields(results["job_bad_env"]) == [["env['1BAD']"]]

    # ListUploads.
    assert error(results["uploads_other_namespace"])["code"] == "permission_denied"
    too_many = error(results["uploads_too_many_tags"])
    assert too_many["code"] == "invalid_argument" and "1000" in too_many["badRequest"][0][0]["description"]
    assert bad_request_fields(results["uploads_too_many_tags"]) == [["tags"]]
    assert bad_request_fields(results["uploads_negative_page_size"]) == [["pageSize"]]
    assert error(results["large_body_no_credential"])["code"] == "unauthenticated"
    assert error(results["over_size_limit"])["code"] == "resource_exhausted"
    assert ok(results["after_large_bodies"])["namespace"] == "team-a"
    for name, (request, expected) in world["walks"].items():
        assert "error" not in results[name], results[name]["error"]
        pages = results[name]["pages"]
        walked = [upload["uploadId"] for page in pages for upload in page.get("uploads", [])]
        assert walked == expected, name
        sizes = [len(page.get("uploads", [])) for page in pages]
        assert all(size == request["pageSize"] for size in sizes[:-1]) and sizes[-1] <= request["pageSize"], name
    first = results["walk_all"]["pages"][0]["uploads"][0]
    assert first["uploadId"] == "u0040" and first["sizeBytes"] == str((40 * 37) % 101)
    assert first["metadataKvs"][0] == string_kv("team", "core")

    assert_wire(calls, results, protocol, binary, gzip, get)


def assert_wire(calls: list[dict], results: dict, protocol: str, binary: bool, gzip: bool, get: bool) -> None:
    """Each call was one HTTP/1.1 request in the chosen codec and encoding: a POST with a chunked
    body, or, in the GET variants, a Connect GET for the methods marked NO_SIDE_EFFECTS."""
    codec = "proto" if binary else "json"
    content_type = f"application/{codec}" if protocol == "connect" else f"application/grpc-web+{codec}"
    # Connect compresses the body (Content-Encoding); gRPC-Web compresses each message (grpc-encoding).
    encoding_header = "content-encoding" if protocol == "connect" else "grpc-encoding"
    compressed_responses = 0
    for call in calls:
        name, result = call["name"], results[call["name"]]
        read_only = call["procedure"].split("/")[1].startswith(READ_ONLY_PREFIXES)
        assert result["idempotent"] == read_only, name  # as generated from proto/
        exchanges = result["exchanges"]
        # One request per call, one per page of a walk (plus the failing one, if any): no retries.
        assert len(exchanges) == len(result.get("pages", [])) + ("pages" not in result or "error" in result), name
        for exchange in exchanges:
            request, response = exchange["request"], exchange["response"]
            assert request["line"].endswith(" HTTP/1.1"), name
            if protocol == "connect":
                assert 0 < int(request["headers"]["connect-timeout-ms"]) <= TIMEOUT_MS, (name, request)
            else:
                assert request["headers"]["grpc-timeout"].endswith("m"), (name, request)  # milliseconds
            if get and read_only and not call.get("post"):
                method, target, _ = request["line"].split(" ")
                path, query = urllib.parse.urlsplit(target)[2:4]
                assert (method, path) == ("GET", f"/{call['procedure']}"), name
                query = dict(urllib.parse.parse_qsl(query))
                assert {k: query.get(k) for k in ("connect", "encoding", "base64")} == {
                    "connect": "v1",
                    "encoding": codec,
                    "base64": "1" if binary else None,
                }, name
                assert query["message"], name
                # An authenticated answer to a GET: no shared cache may keep it.
                assert "private" in response["headers"].get("cache-control", ""), (name, response)
                assert "transfer-encoding" not in request["headers"], (name, request)
            else:
                assert request["line"].startswith(f"POST /{call['procedure']} "), name
                assert request["headers"]["transfer-encoding"] == "chunked", (name, request)
                assert "content-length" not in request["headers"], (name, request)
                assert request["headers"]["content-type"] == content_type, (name, request)
                assert request["headers"].get(encoding_header) == ("gzip" if gzip else None), (name, request)
            compressed_responses += response["headers"].get(encoding_header) == "gzip"
    if gzip:
        assert compressed_responses, "no response came back gzipped"


# --- a pooled client over kept-alive connections ----------------------------------------------


@pytest.fixture(scope="module")
def keepalive_service(django_db_setup, django_db_blocker):
    """gunicorn with gthread workers, which keep connections alive (sync workers close each one)."""
    from tests.support.live import ServiceProcess

    service = ServiceProcess(workers=1, args=("--worker-class", "gthread", "--threads", "2", "--keep-alive", "10"))
    yield service.start()
    service.stop()


@pytest.mark.parametrize("protocol", ["connect", "grpcweb"])
def test_connect_node_pool_survives_early_errors(keepalive_service, generated_es, transactional_db, protocol):
    """An error answered before a large body is read leaves the pooled connection usable (the
    body is drained), and past the size limit too: no call fails with EPIPE or ECONNRESET."""
    create_namespace(actor=SYSTEM, name="team-a")
    admin = issue_api_key(actor=SYSTEM, namespace="team-a", name="admin", role=Role.ADMIN)[1]
    get = {"procedure": f"{NAMESPACES}/GetNamespace", "request": {"namespace": "team-a"}, "token": admin}
    create = f"{NAMESPACES}/CreateNamespace"
    calls = [
        {"name": "warm", **get},
        {"name": "early_error", "procedure": create, "request": {"namespace": "p" * LARGE}},
        {"name": "after_early_error", **get},
        {"name": "over_limit", "procedure": create, "request": {"namespace": "p" * OVER_LIMIT}, "token": admin},
        {"name": "after_over_limit", **get},
    ]
    results = run_plan(generated_es, keepalive_service.url, calls, protocol=protocol, binary=True, gzip=False)

    assert error(results["early_error"])["code"] == "unauthenticated"
    assert error(results["over_limit"])["code"] == "resource_exhausted"
    for name in ("warm", "after_early_error", "after_over_limit"):
        assert ok(results[name])["namespace"] == "team-a", name

    def exchange(name):
        (only,) = results[name]["exchanges"]
        return only

    assert exchange("early_error")["request"]["reusedSocket"]
    assert exchange("early_error")["response"]["headers"].get("connection") != "close"
    assert exchange("after_early_error")["request"]["reusedSocket"]  # the 1 MiB body was drained
    # Past the limit the server may drain the rest or close; either way the next call works, on
    # the same connection exactly when the server kept it.
    kept = exchange("over_limit")["response"]["headers"].get("connection") != "close"
    assert exchange("after_over_limit")["request"]["reusedSocket"] == kept
