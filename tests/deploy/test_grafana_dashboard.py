"""deploy/grafana/: every panel's query parses (promtool) and names only series that exist:
recording rules of deploy/prometheus/ or metrics the service exports."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from controlplane.observability.collectors import scrape_time_collectors

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana" / "controlplane-red.json"
RECORDING_RULES = ROOT / "deploy" / "prometheus" / "recording_rules.yml"
SERIES = re.compile(r"\b((?:rpc_server|controlplane)[a-z0-9_:]*)\b")
SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}


def expressions() -> list[str]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [target["expr"] for panel in panels for target in panel.get("targets", [])]


def test_every_query_parses(tmp_path):
    exprs = [expr.replace("$service", ".*") for expr in expressions()]
    assert len(exprs) >= 15
    # promtool parses PromQL when it checks rules: one recording rule per panel query.
    rules = {
        "groups": [
            {"name": "dashboard", "rules": [{"record": f"dashboard:q{i}", "expr": e} for i, e in enumerate(exprs)]}
        ]
    }
    (tmp_path / "dashboard.yml").write_text(json.dumps(rules))
    binary = shutil.which("promtool") or "/usr/bin/promtool"
    done = subprocess.run([binary, "check", "rules", str(tmp_path / "dashboard.yml")], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.django_db
def test_every_series_is_recorded_or_exported():
    recorded = set(re.findall(r"record: (\S+)", RECORDING_RULES.read_text()))
    families = [*REGISTRY.collect(), *(f for c in scrape_time_collectors() for f in c.collect())]
    exported = {family.name + suffix for family in families for suffix in SUFFIXES.get(family.type, ("",))}
    used = {name for expr in expressions() for name in SERIES.findall(expr)}
    assert used and used <= recorded | exported, used - recorded - exported


@pytest.mark.django_db
def test_database_gauges_are_not_summed_over_replicas():
    # Scrape-time gauges are read from the database: every replica reports the same figure, so
    # a sum over instances counts each job once per replica. max (by label) is the figure.
    from_database = {family.name for c in scrape_time_collectors() for family in c.collect() if family.type == "gauge"}
    assert {"controlplane_jobs", "controlplane_work_queued"} <= from_database
    summed = [
        expr
        for expr in expressions()
        for name in from_database
        if re.search(rf"\b(sum|count)\s*(by\s*\([^)]*\)\s*)?\(\s*{name}\b", expr)
    ]
    assert summed == [], summed
