"""deploy/prometheus/ passes promtool: the config, the rules, and a unit test per alert."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROMETHEUS = ROOT / "deploy" / "prometheus"
TOKEN_FILE = "/etc/prometheus/controlplane-metrics-token"


def promtool(*args: str, cwd: Path = PROMETHEUS) -> str:
    binary = shutil.which("promtool") or "/usr/bin/promtool"
    done = subprocess.run([binary, *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_config_is_valid(tmp_path):
    promtool("check", "config", "--syntax-only", "prometheus.yml")
    # Fully too (with the rule files it names), the token file it reads made up here.
    config = (PROMETHEUS / "prometheus.yml").read_text()
    assert TOKEN_FILE in config
    (tmp_path / "token").write_text("scrape-token\n")
    (tmp_path / "prometheus.yml").write_text(config.replace(TOKEN_FILE, str(tmp_path / "token")))
    for rules in ("recording_rules.yml", "alert_rules.yml"):
        shutil.copy(PROMETHEUS / rules, tmp_path / rules)
    output = promtool("check", "config", "prometheus.yml", cwd=tmp_path)
    assert "SUCCESS: 2 rule files found" in output, output


def test_rules_are_valid():
    output = promtool("check", "rules", "recording_rules.yml", "alert_rules.yml")
    assert output.count("SUCCESS") == 2


def test_every_alert_has_a_unit_test_that_fires_and_one_that_does_not():
    alerts = set(re.findall(r"^\s*- alert: (\w+)$", (PROMETHEUS / "alert_rules.yml").read_text(), re.M))
    cases = re.findall(r"alertname: (\w+)\n\s*exp_alerts:( \[\])?", (PROMETHEUS / "alert_rules_test.yml").read_text())
    fires = {name for name, empty in cases if not empty}
    quiet = {name for name, empty in cases if empty}
    assert len(alerts) == 7
    assert alerts == fires == quiet
    assert "SUCCESS" in promtool("test", "rules", "alert_rules_test.yml")


def test_latency_leaves_out_exactly_the_calls_that_wait_by_design():
    # Server streams, and unary calls whose request says how long to wait (long polls).
    from controlplane.rpc.registry import registry

    waiting = {
        method.name
        for method in registry.methods.values()
        if method.server_streaming or "wait_seconds" in method.input_type.fields_by_name
    }
    assert {"AcquireWork", "WatchJobs", "FollowJobLogs"} <= waiting
    rules = (PROMETHEUS / "recording_rules.yml").read_text()
    left_out = re.findall(r'rpc_server_duration_seconds_bucket\{method!~"([^"]+)"\}', rules)
    assert len(left_out) == 2  # the p99 and the p50
    assert all(set(names.split("|")) == waiting for names in left_out), (left_out, waiting)
