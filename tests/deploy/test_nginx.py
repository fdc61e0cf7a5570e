"""The recommended production setup (deploy/nginx.conf + deploy/gunicorn.conf.py) holds
against slow clients: with 50 connections that never finish their headers held open,
/healthz still answers within 100 ms. The same 50 against gunicorn alone stall it (the
control, which shows that the first test measures the proxy and not luck).

nginx is Debian's (scripts/bootstrap --tests installs it), run unprivileged with its pid,
logs and temp files in a temporary directory; the site file is the shipped one with only
its ports, certificate and socket paths replaced.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import pwd
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from tests.support.live import ROOT, ServiceProcess, free_port, stop_process

HALF_OPEN = 50
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


@pytest.mark.e2e
def test_healthz_answers_within_100_ms_through_nginx_with_50_half_open_connections(transactional_db):
    with ExitStack() as stack:
        workdir = stack.enter_context(_unprivileged_dir())
        socket_path = workdir / "gunicorn.sock"
        stack.enter_context(_gunicorn_from_deploy_config(socket_path))
        http_port, https_port = free_port(), free_port()
        stack.enter_context(_nginx(workdir, socket_path, http_port, https_port))
        context = ssl.create_default_context(cafile=str(workdir / "ca.pem"))
        url = f"https://127.0.0.1:{https_port}/healthz"

        assert _get(url, context) == 200  # warm: TLS session cache, worker, database connection
        stack.enter_context(_half_open_connections(https_port, context, HALF_OPEN))
        timings = [_timed_get(url, context) for _ in range(7)]

        assert all(status == 200 for status, _ in timings), timings
        elapsed_ms = [seconds * 1000 for _, seconds in timings]
        print(f"/healthz through nginx with {HALF_OPEN} half-open connections: {elapsed_ms} ms")
        assert max(elapsed_ms) < 100, elapsed_ms
        # The plain-HTTP server only redirects to HTTPS.
        assert _redirect_location(f"http://127.0.0.1:{http_port}/healthz") == "https://127.0.0.1/healthz"


@pytest.mark.e2e
def test_control_gunicorn_alone_is_stalled_by_the_same_connections(transactional_db):
    service = ServiceProcess(workers=2).start()
    try:
        # A socket timeout: every worker waits on a slow client.
        with _half_open_connections(service.port, None, HALF_OPEN), pytest.raises(OSError):
            urllib.request.urlopen(service.url + "/healthz", timeout=1)
    finally:
        service.stop()


@pytest.mark.e2e
def test_reflection_bodies_are_limited_at_the_door(transactional_db):
    # Reflection is anonymous: nginx refuses a large body before gunicorn
    # reads any of it, and still passes the small questions reflection clients ask.
    with ExitStack() as stack:
        workdir = stack.enter_context(_unprivileged_dir())
        socket_path = workdir / "gunicorn.sock"
        stack.enter_context(_gunicorn_from_deploy_config(socket_path))
        https_port = free_port()
        stack.enter_context(_nginx(workdir, socket_path, free_port(), https_port))
        context = ssl.create_default_context(cafile=str(workdir / "ca.pem"))
        url = f"https://127.0.0.1:{https_port}/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"

        def post(message: bytes) -> tuple[int, bytes]:
            frame = b"\x00" + len(message).to_bytes(4, "big") + message
            request = urllib.request.Request(url, data=frame, headers={"Content-Type": "application/grpc-web+proto"})
            try:
                with urllib.request.urlopen(request, timeout=10, context=context) as response:
                    return response.status, response.read()
            except urllib.error.HTTPError as error:
                return error.code, error.read()

        assert post(b"\x0a" * (1024 * 1024))[0] == 413
        status, body = post(b"\x3a\x00")  # ServerReflectionRequest{list_services: ""}
        assert status == 200 and b"containers.api.v1.NamespaceService" in body


def _get(url: str, context: ssl.SSLContext) -> int:
    with urllib.request.urlopen(url, timeout=5, context=context) as response:
        return response.status


def _timed_get(url: str, context: ssl.SSLContext) -> tuple[int, float]:
    started = time.perf_counter()
    status = _get(url, context)
    return status, time.perf_counter() - started


def _redirect_location(url: str) -> str:
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    with pytest.raises(urllib.error.HTTPError) as caught:
        opener.open(url, timeout=5)
    assert caught.value.code == 301
    return caught.value.headers["Location"]


@contextmanager
def _half_open_connections(port: int, context: ssl.SSLContext | None, count: int):
    """Connections that send the start of a request and then nothing (slowloris)."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            if context is not None:
                sock = context.wrap_socket(sock, server_hostname="127.0.0.1")
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            sockets.append(sock)
        yield
    finally:
        for sock in sockets:
            sock.close()


@contextmanager
def _unprivileged_dir():
    """A temporary directory that nginx's unprivileged user owns (when the tests run as root)."""
    path = Path(tempfile.mkdtemp(prefix="cp-nginx-"))
    try:
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            os.chown(path, nobody.pw_uid, nobody.pw_gid)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@contextmanager
def _gunicorn_from_deploy_config(
    socket_path: Path, config: str = "deploy/gunicorn.conf.py", workers: int = 2, env: dict | None = None
):
    service = ServiceProcess(env={"USE_X_FORWARDED_PROTO": "true", "SECURE_SSL_REDIRECT": "true", **(env or {})})
    log = open(service.log_path, "wb")  # noqa: SIM115 - closed below
    command = [sys.executable, "-m", "gunicorn", "-c", config, "controlplane.wsgi",
               "--bind", f"unix:{socket_path}", "--workers", str(workers)]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, env=service.env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while not socket_path.exists():
            assert process.poll() is None, service.log()
            assert time.monotonic() < deadline, service.log()
            time.sleep(0.1)
        yield process
    finally:
        stop_process(process)
        log.close()
        service.remove_log()


@contextmanager
def _nginx(workdir: Path, socket_path: Path, http_port: int, https_port: int, streams_socket: Path | None = None):
    _write_certificate(workdir)
    site = (ROOT / "deploy" / "nginx.conf").read_text()
    for shipped, here in [
        ("unix:/run/controlplane/gunicorn.sock", f"unix:{socket_path}"),
        ("unix:/run/controlplane/streams.sock", f"unix:{streams_socket or workdir / 'streams.sock'}"),
        ("listen 80;", f"listen 127.0.0.1:{http_port};"),
        ("listen [::]:80;", ""),
        ("listen 443 ssl http2;", f"listen 127.0.0.1:{https_port} ssl http2;"),
        ("listen [::]:443 ssl http2;", ""),
        ("/etc/ssl/controlplane/fullchain.pem", str(workdir / "cert.pem")),
        ("/etc/ssl/controlplane/privkey.pem", str(workdir / "key.pem")),
    ]:
        assert site.count(shipped) == 1, f"deploy/nginx.conf no longer has {shipped!r}: update this test"
        site = site.replace(shipped, here)
    (workdir / "site.conf").write_text(site)
    temp_paths = "\n".join(
        f"    {kind}_temp_path {workdir / kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    (workdir / "nginx.conf").write_text(
        f"daemon off;\nworker_processes 1;\npid {workdir / 'nginx.pid'};\nerror_log {workdir / 'error.log'} warn;\n"
        f"events {{ worker_connections 512; }}\n"
        f"http {{\n    access_log {workdir / 'access.log'};\n{temp_paths}\n    include {workdir / 'site.conf'};\n}}\n"
    )  # fmt: skip
    if os.geteuid() == 0:
        for path in workdir.iterdir():
            os.chown(path, pwd.getpwnam("nobody").pw_uid, -1)
    command = [NGINX, "-p", str(workdir), "-e", str(workdir / "error.log"), "-c", str(workdir / "nginx.conf")]
    user = "nobody" if os.geteuid() == 0 else None
    process = subprocess.Popen(command, user=user, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        _wait_listening(https_port, process, workdir)
        yield process
    finally:
        stop_process(process)


def _wait_listening(port: int, process: subprocess.Popen, workdir: Path, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"nginx exited: {process.stdout.read().decode()}{_read(workdir / 'error.log')}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nginx did not listen on {port}: {_read(workdir / 'error.log')}")


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def _write_certificate(workdir: Path) -> None:
    """A certificate for 127.0.0.1 (cert.pem, key.pem) from a test CA (ca.pem), which the test
    clients trust. Issued by a CA rather than self-signed: rustls (pyqwest, the connectrpc
    client's transport) refuses a CA certificate used as the server's own."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)

    def issue(subject: str, key, issuer: x509.Name, signer, *, ca: bool):
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(issuer)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if not ca:
            san = x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
            builder = builder.add_extension(san, critical=False)
        return builder.sign(signer, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "controlplane test CA")])
    ca = issue("controlplane test CA", ca_key, ca_name, ca_key, ca=True)
    certificate = issue("127.0.0.1", key, ca_name, ca_key, ca=False)
    (workdir / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (workdir / "cert.pem").write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    (workdir / "key.pem").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
