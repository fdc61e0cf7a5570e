"""The read side of uploads: ListUploads from request to page.

query (request → ListQuery) → cursors (sealed positions) → page_query (one SQL statement per
page) → rows_to_json (rows → the records' proto3 JSON); listing runs them as one use case.
It may read what the write side declares (the stored columns, write/rows.py); the write side
never imports it.
"""
