"""The write side of uploads: records in, rows stored.

json_to_rows (a record's JSON → rows, the import path), records (the protobuf record ↔ rows
reference mapping), rows (the stored columns and their limits), writer (COPY or bulk insert)
and synthetic (generated records for seeding and benchmarks).
"""
