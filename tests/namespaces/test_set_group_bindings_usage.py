"""`manage.py set_group_bindings`: bad arguments exit 2 (as argparse's own errors), a refused
change exits 1, as the README's Operations section says (issue 23)."""

import subprocess
import sys

import pytest

from tests.conftest import ROOT


@pytest.mark.parametrize(
    "args",
    [
        ["team-b"],  # no GROUP=ROLE and no --clear
        ["team-b", "eng=viewer", "--clear"],
        ["team-b", "eng"],
        ["team-b", "eng=boss"],
        [],  # argparse's own: no NS
    ],
)
def test_bad_arguments_exit_2_before_any_database_access(args):
    result = subprocess.run(
        [sys.executable, "manage.py", "set_group_bindings", *args], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    assert result.stderr.strip()


def test_a_refused_change_exits_1(transactional_db):
    from tests.support import live

    env = {"DATABASE_URL": live.test_database_url(), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [sys.executable, "manage.py", "set_group_bindings", "nope", "eng=viewer"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert result.returncode == 1 and "namespace 'nope' not found" in result.stderr, result.stderr
