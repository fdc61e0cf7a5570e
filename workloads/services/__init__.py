"""Writes to containers resources, one module per kind. The RPC views, the admin and
manage.py all call these; each runs in one transaction and is recorded in the audit log."""
