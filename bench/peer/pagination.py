from rest_framework.pagination import CursorPagination


class NewestFirst(CursorPagination):
    """Newest uploads first, 50 a page. upload_id breaks ties of created_at, as the product's
    order does, so both answers hold the same records in the same order."""

    page_size = 50
    ordering = ("-created_at", "-upload_id")
