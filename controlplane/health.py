"""Probes for balancers and orchestrators: /healthz (liveness) and /readyz (readiness)."""

from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.http import JsonResponse

_migrated = False  # once true for this process it stays true: migrations only move forward


def healthz(request):
    """Liveness: the process serves requests. Touches no database, so an outage restarts nothing."""
    return JsonResponse({"status": "ok"})


def readyz(request):
    """Readiness: the database answers and every migration this code knows is applied."""
    global _migrated
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        if not _migrated:
            executor = MigrationExecutor(connection)
            pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
            if pending:
                return JsonResponse({"status": "migrations pending", "pending": len(pending)}, status=503)
            _migrated = True
    except DatabaseError:
        return JsonResponse({"status": "database unavailable"}, status=503)
    return JsonResponse({"status": "ok"})
