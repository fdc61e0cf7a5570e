"""The suite's Django settings: the service's own, read from an environment without the
caller's credentials and cluster configuration (issue 23).

pytest-django imports this module before any conftest runs, which is the first moment the
environment can be cleaned before the settings read it. Removed: `CP_*` and `CPCTL_*` (the
SDK's and cpctl's address, key, namespace and context), `OIDC_*` (the server's identity
provider) and `KUBECONFIG`. `XDG_CONFIG_HOME` points at an empty directory, so cpctl finds no
stored sign-in or context of the caller's. Kept: `DATABASE_URL`, which is how the suite is
pointed at PostgreSQL (see "Run the tests"). Server processes the tests start inherit the
cleaned environment and load `controlplane.settings`, as in production.
"""

import atexit
import os
import shutil
import tempfile

CLEARED_PREFIXES = ("CP_", "CPCTL_", "OIDC_")
CLEARED = {"KUBECONFIG"}

for _name in list(os.environ):
    if _name.startswith(CLEARED_PREFIXES) or _name in CLEARED:
        del os.environ[_name]
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="cp-tests-config-")
atexit.register(shutil.rmtree, os.environ["XDG_CONFIG_HOME"], ignore_errors=True)
os.environ["DJANGO_SETTINGS_MODULE"] = "controlplane.settings"  # for the processes tests start

from controlplane.settings import *  # noqa: E402, F403

# A pytest run inside a test (tests/suite/test_hygiene.py) needs a test database of its own:
# on SQLite the name is fixed (var/test.sqlite3), and the inner run would drop the outer one's.
if _suffix := os.environ.get("TESTS_DATABASE_SUFFIX"):
    _test = DATABASES["default"].setdefault("TEST", {})  # noqa: F405
    if DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
        _test["NAME"] = str(BASE_DIR / "var" / f"test-{_suffix}.sqlite3")  # noqa: F405
    else:
        _test["NAME"] = f"test_{DATABASES['default']['NAME']}_{_suffix}"  # noqa: F405
