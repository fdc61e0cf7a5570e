"""A private PostgreSQL cluster for fault tests: initdb in a temp dir, on a free loopback port.

The test owns it, so it can stop and start it under a running service. The server binaries
come from /usr/lib/postgresql/<version>/bin (Debian's postgresql package, which CI installs);
as root, they run as the `postgres` OS user, since PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.support.live import free_port


def _bin_dir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[-3]))
    if not found:
        raise RuntimeError("no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)")
    return Path(found[-1]).parent


class PrivateCluster:
    def __init__(self):
        self.bin = _bin_dir()
        self.root = Path(tempfile.mkdtemp(prefix="cp-faults-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/faults"
        self._user = "postgres" if os.geteuid() == 0 else None
        if self._user:
            pw = pwd.getpwnam(self._user)
            os.chown(self.root, pw.pw_uid, pw.pw_gid)

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(self.bin / args[0]), *args[1:]],
            user=self._user,
            cwd=self.root,
            capture_output=True,
            text=True,
            check=check,
            timeout=120,
        )

    def init(self) -> PrivateCluster:
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
        self.start()
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "faults")
        return self

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"), "-o", options, "-w", "start")

    def stop(self) -> None:
        # fast: sessions are terminated, as in a failover or a restart by an operator.
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def destroy(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", check=False)
        shutil.rmtree(self.root, ignore_errors=True)
