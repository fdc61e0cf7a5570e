"""GET /metrics: the Prometheus text format, for a scraper holding the scrape credential.

Readable with `Authorization: Bearer <METRICS_BEARER_TOKEN>`, or without a credential from
an address in METRICS_ALLOWED_NETWORKS (the direct peer: behind nginx every request comes
from its socket, so there only the token tells a scraper apart). Anything else: 401 when a
token is configured (it says how to authenticate), else 403.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from functools import cache

from django.conf import settings
from django.http import HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest, multiprocess

from .collectors import scrape_time_collectors


@require_GET
def metrics_view(request):
    refusal = _refusal(request)
    if refusal is not None:
        return refusal
    response = HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)
    response["Cache-Control"] = "no-store"
    return response


def exposition() -> bytes:
    """Every worker's instruments (or this process's), then the scrape-time collectors."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        # prometheus_client's multiprocess recipe: a fresh registry reading every worker's files.
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    scraped = CollectorRegistry(auto_describe=False)
    for collector in scrape_time_collectors():
        scraped.register(collector)
    return generate_latest(registry) + generate_latest(scraped)


def _refusal(request) -> HttpResponse | None:
    if _allowed_network(request.META.get("REMOTE_ADDR", "")):
        return None
    token = settings.METRICS_BEARER_TOKEN
    if not token:
        return HttpResponse("/metrics: forbidden from this address\n", status=403, content_type="text/plain")
    scheme, _, given = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode()):
        return None
    response = HttpResponse("/metrics: a scrape token is required\n", status=401, content_type="text/plain")
    response["WWW-Authenticate"] = 'Bearer realm="metrics"'
    return response


def _allowed_network(address: str) -> bool:
    networks = _networks(tuple(settings.METRICS_ALLOWED_NETWORKS))
    if not networks or not address:
        return False
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)


@cache
def _networks(cidrs: tuple[str, ...]) -> tuple:
    return tuple(ipaddress.ip_network(cidr, strict=False) for cidr in cidrs)
