"""The pages a person meets first: `/` (links to the console, sign-in and the API) and the API
description at /api/, built from the registered services' descriptors, with their .proto files."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.utils.module_loading import import_string

from controlplane.auth import oidc


@dataclass(frozen=True)
class ApiMethod:
    name: str
    path: str
    request: str
    response: str


@dataclass(frozen=True)
class ApiService:
    name: str
    proto_file: str
    methods: list[ApiMethod]


def api_services() -> list[ApiService]:
    """Every service in RPC_SERVICES as the contract (proto/) declares it."""
    services = []
    for dotted in settings.RPC_SERVICES:
        descriptor = import_string(dotted).descriptor
        methods = [
            ApiMethod(
                name=method.name,
                path=f"/{descriptor.full_name}/{method.name}",
                request=_short_name(method.input_type, descriptor),
                response=_short_name(method.output_type, descriptor),
            )
            for method in descriptor.methods
        ]
        services.append(ApiService(name=descriptor.full_name, proto_file=descriptor.file.name, methods=methods))
    return services


def _short_name(message, service) -> str:
    """A message's name without the package when it is the service's own (as in its .proto)."""
    package = service.file.package
    return message.full_name.removeprefix(f"{package}.") if package else message.full_name


def landing(request):
    return render(request, "site/landing.html", {"oidc_sign_in": oidc.is_configured()})


def api_description(request):
    return render(request, "site/api.html", {"services": api_services()})


def proto_source(request, name: str):
    # Only the files the served services come from: the name never reaches the file system otherwise.
    if name not in {service.proto_file for service in api_services()}:
        raise Http404("no such proto file")
    text = (settings.BASE_DIR / "proto" / name).read_text()
    return HttpResponse(text, content_type="text/plain; charset=utf-8")
