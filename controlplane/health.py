from django.db import connection
from django.http import JsonResponse


def healthz(request):
    """Liveness and database reachability, for load balancers and test harnesses."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:
        return JsonResponse({"status": "database unavailable"}, status=503)
    return JsonResponse({"status": "ok"})
