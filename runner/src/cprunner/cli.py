"""`cprunner`: the command line.

cprunner --engine podman [--url URL] [--concurrency N] …   (key in CP_RUNNER_KEY)
cprunner podman-service [--socket PATH]                     (podman's API, with our containers.conf)
cprunner containers-conf                                    (prints the shipped containers.conf's path)
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import signal
import socket
import sys
from importlib import resources
from pathlib import Path

from . import __version__
from .engines.base import EngineError
from .engines.podman import PodmanEngine, default_socket
from .engines.process import ProcessEngine
from .runner import KINDS_BY_NAME, Config, Runner

UNSAFE_FLAG = "--i-understand-process-engine-is-unsafe"
_SECRET = re.compile(r"cpk_\S+")


def containers_conf() -> str:
    """The containers.conf podman needs on this machine kind (runc; ulimits within the hard limits)."""
    return str(resources.files("cprunner") / "containers.conf")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        # argparse echoes offending arguments: never a key typed in the wrong place.
        super().error(_SECRET.sub("cpk_…", message))


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {number}")
    return number


def _poll_seconds(value: str) -> int:
    number = int(value)
    if not 1 <= number <= 20:
        raise argparse.ArgumentTypeError(f"must be 1..20 (the server waits at most 20 s), not {number}")
    return number


def _kinds(value: str) -> tuple[int, ...]:
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in KINDS_BY_NAME]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"kinds are a comma-separated subset of job,sandbox,build; not {value!r}")
    return tuple(KINDS_BY_NAME[name] for name in names)


def run_parser() -> argparse.ArgumentParser:
    env = os.environ.get
    parser = _Parser(
        prog="cprunner",
        description="Leases jobs, sandboxes and builds from the control plane and runs them. "
        "Other commands: `cprunner podman-service`, `cprunner containers-conf`.",
    )
    parser.add_argument("--url", default=env("CP_URL"), help="the control plane's URL (env CP_URL)")
    parser.add_argument(
        "--key",
        default=env("CP_RUNNER_KEY"),
        help="the runner key (env CP_RUNNER_KEY, preferred: arguments are visible in ps)",
    )
    parser.add_argument("--engine", choices=["podman", "process", "kubernetes"], required=True)
    parser.add_argument("--concurrency", type=_positive, default=1, help="pieces of work run at once (default 1)")
    parser.add_argument(
        "--name",
        default=env("CP_RUNNER_NAME") or socket.gethostname(),
        help="labels this runner's containers (default: the host name; env CP_RUNNER_NAME). Keep it unique "
        "per engine and stable across restarts: a starting runner removes containers of its name",
    )
    parser.add_argument(
        "--kinds", type=_kinds, default=(), help="job,sandbox,build (default: all; job,sandbox for the process engine)"
    )
    parser.add_argument(
        "--container-url",
        default=env("CP_CONTAINER_URL", ""),
        help="the control plane's URL as sandboxes reach it (CP_URL inside them; default: --url)",
    )
    parser.add_argument("--network", default="", help="the containers' network; \"host\" shares the runner's")
    parser.add_argument(
        "--podman-socket",
        default=env("CP_PODMAN_SOCKET") or default_socket(),
        help=f"podman's API socket (default {default_socket()}; env CP_PODMAN_SOCKET)",
    )
    parser.add_argument(
        "--k8s-namespace",
        default=env("CP_K8S_NAMESPACE", ""),
        help="kubernetes engine: where Jobs, Pods and Secrets go (env CP_K8S_NAMESPACE; default: the runner "
        'pod\'s own namespace, else "default"). Credentials: in-cluster, else KUBECONFIG',
    )
    parser.add_argument(
        "--preview-domain",
        default=env("CP_PREVIEW_DOMAIN", ""),
        help="kubernetes engine: sandboxes get a Service for https://<id>.DOMAIN/ (env CP_PREVIEW_DOMAIN)",
    )
    parser.add_argument(
        "--preview-port", type=_positive, default=8080, help="kubernetes engine: the sandbox port previews reach"
    )
    parser.add_argument(
        "--state-dir",
        default=env("CP_RUNNER_STATE_DIR", ""),
        help="process engine: where it records its processes (default ~/.local/state/cprunner/NAME)",
    )
    parser.add_argument(
        "--poll-seconds", type=_poll_seconds, default=20, metavar="1..20", help="AcquireWork's long poll (default 20)"
    )
    parser.add_argument(
        "--shutdown-grace",
        type=float,
        default=30.0,
        help="on SIGTERM, seconds running work may go on before it is stopped and handed back (default 30)",
    )
    parser.add_argument(
        "--stop-grace", type=float, default=10.0, help="seconds from SIGTERM to SIGKILL on a timeout or shutdown"
    )
    parser.add_argument(UNSAFE_FLAG, dest="unsafe_process", action="store_true", help="allow --engine process")
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    parser.add_argument("--version", action="version", version=f"cprunner {__version__}")
    return parser


def build_config(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Config:
    if not args.url:
        parser.error("the control plane's URL is required: --url or CP_URL")
    if not args.key:
        parser.error("the runner key is required: set CP_RUNNER_KEY (or --key)")
    if args.engine == "process":
        if not args.unsafe_process:
            parser.error(
                f"the process engine runs work as plain processes on this machine, with no isolation "
                f"and no limits; it is for development and tests only. Pass {UNSAFE_FLAG} to use it"
            )
        state = args.state_dir or str(Path.home() / ".local" / "state" / "cprunner" / args.name)
        engine = ProcessEngine(state)
        args.kinds = args.kinds or (KINDS_BY_NAME["job"], KINDS_BY_NAME["sandbox"])  # it builds nothing
    elif args.engine == "kubernetes":
        engine = kubernetes_engine(args)
    else:
        engine = PodmanEngine(args.podman_socket)
    return Config(
        url=args.url,
        key=args.key,
        engine=engine,
        name=args.name,
        concurrency=args.concurrency,
        kinds=args.kinds,
        container_url=args.container_url,
        network=args.network,
        poll_seconds=args.poll_seconds,
        shutdown_grace=args.shutdown_grace,
        stop_grace=args.stop_grace,
    )


def kubernetes_engine(args: argparse.Namespace):
    # Imported here: the kubernetes client is an optional extra (pip install ./runner[kubernetes]).
    try:
        from .engines.kubernetes import KubernetesEngine, default_namespace
    except ImportError:
        print("cprunner: the kubernetes engine needs the client: pip install './runner[kubernetes]'", file=sys.stderr)
        raise SystemExit(2) from None
    try:
        return KubernetesEngine(
            args.k8s_namespace or default_namespace(),
            preview_domain=args.preview_domain,
            preview_port=args.preview_port,
        )
    except EngineError as exc:
        print(f"cprunner: {exc}", file=sys.stderr)
        raise SystemExit(1) from None


def podman_service(argv: list[str]) -> int:
    parser = _Parser(prog="cprunner podman-service", description="Runs `podman system service` for the runner.")
    parser.add_argument("--socket", default=default_socket(), help=f"where to listen (default {default_socket()})")
    args = parser.parse_args(argv)
    Path(args.socket).parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "CONTAINERS_CONF": containers_conf()}
    command = ["podman", "system", "service", "--time=0", f"unix://{args.socket}"]
    os.execvpe("podman", command, env)  # noqa: S606, S607 - becomes podman (found on PATH), as a service manager expects


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["podman-service"]:
        return podman_service(argv[1:])
    if argv[:1] == ["containers-conf"]:
        print(containers_conf())
        return 0
    parser = run_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=args.log_level, format="%(asctime)s %(levelname)s %(threadName)s %(message)s", stream=sys.stderr
    )
    config = build_config(args, parser)
    try:
        runner = Runner(config)
    except Exception as exc:
        print(f"cprunner: {exc}", file=sys.stderr)
        return 1
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: runner.shutdown())
    return runner.run()
