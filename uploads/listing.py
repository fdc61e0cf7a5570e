"""ListUploads as a use case: request → page of records and nextCursor.

Authorization already ran (permissions.CanReadUploads); this resolves the scope,
checks the metadata key types, reads one page and issues the cursor.
"""

from __future__ import annotations

from django.utils import timezone

from controlplane.auth import Principal
from controlplane.errors import Error
from uploads.api.v1 import uploads_pb2 as pb

from . import cursors, query, selectors
from .permissions import has_bucket_reference, validate_ref
from .records import TYPE_NAME, record_from_rows


def list_uploads(principal: Principal, request: pb.ListUploadsRequest) -> pb.ListUploadsResponse:
    parsed = query.parse(request)
    bucket, namespaces = None, selectors.readable_namespaces(principal)
    if has_bucket_reference(request):
        validate_ref(request.bucket)
        ref = request.bucket
        bucket = selectors.get_bucket(bucket_id=ref.bucket_id, namespace=ref.namespace, name=ref.name)
        scope = str(bucket.pk)
    else:
        scope = "*" if namespaces is None else "ns:" + ",".join(namespaces)
    position = cursors.decode(parsed, scope, request.cursor)
    anchor = position.anchor if position else timezone.now()
    if parsed.metadata:
        _check_metadata_types(parsed, bucket, namespaces)
    page = selectors.list_uploads(bucket=bucket, namespaces=namespaces, query=parsed, position=position, anchor=anchor)
    next_cursor = ""
    if page.has_more:
        last = page.uploads[-1]
        next_cursor = cursors.encode(
            parsed, scope, value=getattr(last, parsed.sort_by), upload_id=last.upload_id, anchor=anchor
        )
    return pb.ListUploadsResponse(
        uploads=[
            record_from_rows(
                u,
                page.integrations.get(u.integration_id),
                page.aliases.get(u.pk, ()),
                page.meta_uploads.get(u.pk, ()),
            )
            for u in page.uploads
        ],
        next_cursor=next_cursor,
    )


def _check_metadata_types(parsed: query.ListQuery, bucket, namespaces) -> None:
    wrong = selectors.unfilterable_keys(bucket, namespaces, {m.key for m in parsed.metadata})
    for index, condition in enumerate(parsed.metadata):
        if condition.key in wrong:
            held = TYPE_NAME.get(wrong[condition.key], "an unknown type").removeprefix("METADATA_VALUE_TYPE_")
            raise Error.invalid_argument(
                f"metadataFilters[{index}].key",
                f"key {condition.key!r} holds {held} values; only STRING or BOOL keys can be filtered",
            )
