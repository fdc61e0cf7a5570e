"""ListUploads as a use case: request → the page's proto3 JSON object (records and nextCursor).

Authorization already ran (permissions.CanReadUploads) and looked the bucket up; this
shares that lookup, checks the metadata key types, reads one page and issues the cursor.
The object is built directly from the rows (rows_to_json); the RPC module hands it to the
wire codecs.
"""

from __future__ import annotations

from django.utils import timezone

from controlplane.auth import Principal
from controlplane.errors import Error
from uploads.api.v1 import uploads_pb2 as pb

from .. import selectors
from ..permissions import bucket_of, has_bucket_reference
from ..write.records import TYPE_NAME
from . import cursors, query
from .page_query import COLUMN_INDEX, fetch_page
from .rows_to_json import moment, record


def uploads_page(principal: Principal, request: pb.ListUploadsRequest) -> dict:
    """ListUploadsResponse as its proto3 JSON object (json_format.MessageToDict's)."""
    parsed = query.parse(request)
    bucket, namespaces = None, None
    if has_bucket_reference(request):
        bucket = bucket_of(request)
        scope = str(bucket.id)
    else:
        namespaces = selectors.readable_namespaces(principal)
        scope = "*" if namespaces is None else "ns:" + ",".join(namespaces)
    position = cursors.decode(parsed, scope, request.cursor)
    anchor = position.anchor if position else timezone.now()
    if parsed.metadata:
        wrong = bucket.unfilterable if bucket else selectors.unfilterable_keys(namespaces, _keys(parsed))
        _check_metadata_types(parsed, wrong)
    page = fetch_page(bucket=bucket, namespaces=namespaces, query=parsed, position=position, anchor=anchor)
    body: dict = {}
    if page.rows:
        body["uploads"] = [record(row) for row in page.rows]
    if page.has_more:
        last = page.rows[-1]
        value = last[COLUMN_INDEX[parsed.sort_by]]
        if parsed.sort_by in ("created_at", "updated_at"):
            value = moment(value)
        body["nextCursor"] = cursors.encode(
            parsed, scope, value=value, upload_id=last[COLUMN_INDEX["upload_id"]], anchor=anchor
        )
    return body


def _keys(parsed: query.ListQuery) -> set[str]:
    return {m.key for m in parsed.metadata}


def _check_metadata_types(parsed: query.ListQuery, wrong: dict[str, int]) -> None:
    for index, condition in enumerate(parsed.metadata):
        if condition.key in wrong:
            held = TYPE_NAME.get(wrong[condition.key], "an unknown type").removeprefix("METADATA_VALUE_TYPE_")
            raise Error.invalid_argument(
                f"metadataFilters[{index}].key",
                f"key {condition.key!r} holds {held} values; only STRING or BOOL keys can be filtered",
            )
