"""The request path is declared once (settings.MIDDLEWARE, then settings.RPC_INTERCEPTORS) in the
order it runs, and the documentation's list of interceptors follows that declaration."""

import re
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from controlplane.rpc import interceptors

ROOT = Path(__file__).resolve().parents[3]
# A numbered list item naming a class: "1. `Authenticate`: ..."
ITEM = re.compile(r"^\d+\. `(\w+)`", re.MULTILINE)


def test_the_chain_is_built_in_the_declared_order(settings):
    chain = interceptors.chain(permissions={})
    # A function entry (tracing's) adds zero or more interceptors: none while tracing is off.
    classes = [path for path in settings.RPC_INTERCEPTORS if isinstance(import_string(path), type)]
    assert [type(i).__name__ for i in chain] == [path.rsplit(".", 1)[1] for path in classes]
    # connectrpc runs metadata interceptors first: declared first, so the declaration is the run order.
    kinds = [hasattr(i, "on_start_sync") for i in chain]
    assert kinds == sorted(kinds, reverse=True)


def test_an_order_the_runtime_would_not_keep_is_refused(settings):
    settings.RPC_INTERCEPTORS = list(reversed(settings.RPC_INTERCEPTORS))
    with pytest.raises(ImproperlyConfigured, match="must be listed before"):
        interceptors.chain(permissions={})


def test_request_path_lists_middleware_then_interceptors_then_the_handler(settings):
    path = interceptors.request_path()
    assert path[: len(settings.MIDDLEWARE)] == settings.MIDDLEWARE
    assert path[len(settings.MIDDLEWARE) : -1] == settings.RPC_INTERCEPTORS
    # Observation wraps everything (request id, the request's log line); then shedding, before
    # any other work.
    assert path[:2] == [
        "controlplane.observability.requests.ObservabilityMiddleware",
        "controlplane.faults.shedding.LoadSheddingMiddleware",
    ]


def test_the_documented_interceptor_list_follows_the_declaration(settings):
    declared = [path.rsplit(".", 1)[1] for path in settings.RPC_INTERCEPTORS]
    documents = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    lists = []
    for document in documents:
        for block in re.split(r"\n\s*\n(?!\s|\d+\. )", document.read_text()):
            names = ITEM.findall(block)
            if names and names[0] == declared[0]:
                lists.append((document.name, names))
    assert lists, "no document lists the interceptors (1. `Authenticate` ...)"
    for name, names in lists:
        assert names == declared, name
