"""Keyset pages of a namespace's resources, for the List* views."""

from __future__ import annotations

from django.db.models import Model
from google.protobuf.message import Message

from controlplane.rpc import pagination

from .. import selectors


def list_page(model: type[Model], request: Message) -> tuple[list, str]:
    """(rows, next_page_token) for a request with namespace, page_size and page_token."""
    salt = f"containers.{model._meta.model_name}.list"
    limit = pagination.page_size(request.page_size)
    after = pagination.decode(request.page_token, salt=salt, binding=request.namespace)
    rows = selectors.page(model, namespace=request.namespace, after=after, limit=limit + 1)
    page = rows[:limit]
    token = pagination.encode(page[-1].pk, salt=salt, binding=request.namespace) if len(rows) > limit else ""
    return page, token
