"""A trailing newline never passes validation: `$` matches before one, so every pattern is
anchored with fullmatch or \\A…\\Z. The second test keeps `^…$` patterns out of the tree."""

from __future__ import annotations

import ast

import pytest

from controlplane.errors import Error
from namespaces.models import dns_label_validator
from namespaces.services import PullSecret, Target, create_namespace
from namespaces.validation import validate_pull_secrets, validate_target
from tests.conftest import ROOT, SYSTEM
from workloads.services import environments, jobs, workspaces
from workloads.services.common import validate_image
from workloads.services.egress import parse_target

NEWLINE_CASES = {
    "namespace": lambda: create_namespace(actor=SYSTEM, name="team-a\n"),
    "image": lambda: validate_image("python:3.12\n"),
    "env name": lambda: jobs.validate_env({"LD_PRELOAD\n": "/x.so"}),
    "workspace": lambda: workspaces.create_workspace(actor=SYSTEM, namespace="team-a", name="ws\n"),
    "environment": lambda: environments.register_environment(
        actor=SYSTEM, namespace="team-a", name="env\n", image="python:3.12"
    ),
    "internal target name": lambda: validate_target(Target("db\n", "10.0.0.5"), "target"),
    "internal target host": lambda: validate_target(Target("db", "db.internal\n"), "target"),
    "registry": lambda: validate_pull_secrets([PullSecret("ghcr.io\n", "vault://kv/x")]),
    "secret ref": lambda: validate_pull_secrets([PullSecret("ghcr.io", "vault://kv/x\n")]),
    "egress host inside": lambda: parse_target("api.example.com\n:443"),
}


@pytest.mark.django_db
@pytest.mark.parametrize("case", NEWLINE_CASES)
def test_trailing_newline_is_invalid_argument(namespace, case):
    with pytest.raises(Error) as caught:
        NEWLINE_CASES[case]()
    assert caught.value.code.wire_name == "invalid_argument", caught.value


def test_model_validator_refuses_a_trailing_newline():
    dns_label_validator("team-a")
    with pytest.raises(Exception, match="DNS label"):
        dns_label_validator("team-a\n")


def _regex_literals(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if name in ("compile", "match", "search", "fullmatch", "RegexValidator") and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    yield node.lineno, first.value
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            value = node.value.value
            if isinstance(value, str) and value.startswith("^") and value.endswith("$"):
                yield node.lineno, value


def test_no_caret_dollar_patterns_in_the_tree():
    offenders = []
    for path in ROOT.rglob("*.py"):
        relative = path.relative_to(ROOT)
        if relative.parts[0] in (".venv", "node_modules", "var") or "migrations" in relative.parts:
            continue
        for line, pattern in _regex_literals(ast.parse(path.read_text(), str(path))):
            if pattern.endswith("$") and not pattern.endswith("\\$"):
                offenders.append(f"{relative}:{line}: {pattern!r}")
    assert not offenders, "use fullmatch or \\A…\\Z instead of …$:\n" + "\n".join(offenders)
