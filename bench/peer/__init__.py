"""The usual Django answer to GetNamespace and ListUploads: Django REST framework with
djangorestframework-api-key, nested ModelSerializers and CursorPagination. Bench-only
(bench/requirements.txt); the product never imports it. See bench/README.md."""
