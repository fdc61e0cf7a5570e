"""Keyset pages of a namespace's resources, for the List* views."""

from __future__ import annotations

from django.db.models import Model
from google.protobuf.message import Message

from controlplane.rpc import pagination

from .. import selectors


def list_page(model: type[Model], request: Message) -> tuple[list, str]:
    """(rows, next_page_token) for a request with namespace, page_size and page_token."""
    return pagination.keyset_page(
        request,
        salt=f"containers.{model._meta.model_name}.list",
        binding=request.namespace,
        fetch=lambda after, limit: selectors.page(model, namespace=request.namespace, after=after, limit=limit),
        position_of=lambda row: row.pk,
    )
