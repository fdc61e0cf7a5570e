"""bench/load_bench.py without wrk: the requests of its workload succeed against the service with
the keys it issues, its plan lines are what bench/load/mixed.lua parses, its wrk command line is
well-formed, and it refuses to run on SQLite."""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from uploads.models import Bucket, Upload
from uploads.services import create_bucket, seed_uploads
from workloads.models import Job

SCRIPT = ROOT / "bench" / "load_bench.py"


@pytest.fixture(scope="module")
def load_bench():
    spec = importlib.util.spec_from_file_location("load_bench", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def bucket(db, load_bench) -> Bucket:
    from controlplane.auth import Principal

    load_bench.prepare_namespace()
    bucket = create_bucket(actor=Principal.system("test"), namespace=load_bench.NAMESPACE, name="uploads-60")
    seed_uploads(actor=Principal.system("test"), bucket=bucket, count=60, seed=3)
    return bucket


def test_every_method_of_the_mix_answers_200_with_its_key(rpc, bucket, load_bench):
    keys = load_bench.issue_keys()
    methods = load_bench.workload(str(bucket.pk))
    assert {m.name: m.weight for m in methods} == {"ListUploads": 6, "GetNamespace": 2, "ListJobs": 1, "RunJob": 1}
    for call in range(2):
        for method in methods:
            body = {**method.body}
            if "requestId" in body:
                body["requestId"] = f"test-{call}"
            result = rpc(method.path.lstrip("/"), body, token=keys[method.role])
            assert result.status == 200, (method.name, result)
    assert len(rpc(methods[0].path.lstrip("/"), methods[0].body, token=keys["VIEWER"]).body["uploads"]) == 50
    assert Job.objects.filter(namespace__name=load_bench.NAMESPACE).count() == 2  # a fresh requestId: a new job
    assert Upload.objects.filter(bucket=bucket).count() == 60


def test_a_second_run_revokes_the_first_runs_keys(rpc, bucket, load_bench):
    first = load_bench.issue_keys()
    load_bench.issue_keys()
    get_namespace = load_bench.workload(str(bucket.pk))[1]
    assert rpc(get_namespace.path.lstrip("/"), get_namespace.body, token=first["ADMIN"]).status == 401


def test_plan_lines_match_the_lua_pattern(load_bench):
    lua = (ROOT / "bench" / "load" / "mixed.lua").read_text()
    lua_pattern = re.search(r'line:match\("(.+?)"\)', lua).group(1)
    # The Lua pattern in Python's syntax: %d is \d; the rest of it is shared.
    pattern = re.compile(lua_pattern.replace("%d", r"\d").replace(r"\t", "\t"))
    for method in load_bench.workload("00000000-0000-0000-0000-000000000000"):
        line = method.plan_line("cpk_token")
        fields = pattern.fullmatch(line).groups()
        assert fields[0] == method.name and fields[3] == "cpk_token" and "\n" not in line
    assert '"requestId":"{requestId}"' in load_bench.workload("x")[3].plan_line("t")
    assert "{requestId}" in lua


def test_wrk_runs_one_thread_per_connection_with_the_script(load_bench):
    command = load_bench.wrk_command("http://127.0.0.1:8000", 16, 10)
    options = dict(zip(command[1:-1:2], command[2:-1:2], strict=True))
    assert options == {
        "--threads": "16",
        "--connections": "16",
        "--duration": "10s",
        "--timeout": f"{load_bench.CLIENT_TIMEOUT_S}s",
        "--script": str(ROOT / "bench" / "load" / "mixed.lua"),
    }
    assert command[-1] == "http://127.0.0.1:8000"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("sync:5", ("sync", 5, 1)), ("gthread:2x4", ("gthread", 2, 4)), ("gthread:3", ("gthread", 3, 1))],
)
def test_server_configurations_parse(load_bench, text, expected):
    config = load_bench.ServerConfig.parse(text)
    assert (config.worker_class, config.workers, config.threads) == expected
    args = config.gunicorn_args()
    assert args[args.index("--worker-class") + 1] == expected[0]
    assert args[args.index("--config") + 1] == str(ROOT / "deploy" / "gunicorn.conf.py")


@pytest.mark.parametrize("text", ["eventlet:2", "sync:2x4", "gthread:two", "sync"])
def test_bad_server_configurations_are_refused(load_bench, text):
    with pytest.raises(argparse.ArgumentTypeError, match=r"expected sync:WORKERS|sync workers have one thread"):
        load_bench.ServerConfig.parse(text)


def test_bench_refuses_sqlite(tmp_path):
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--uploads", "10"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "meant for PostgreSQL" in result.stderr
    assert not (tmp_path / "db.sqlite3").exists()
