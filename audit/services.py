from controlplane.auth import Principal

from .models import AuditEvent


def record(*, actor: Principal, action: str, target: str, namespace: str = "", changes: dict | None = None):
    """Writes an audit row; call inside the transaction of the change it records."""
    return AuditEvent.objects.create(
        actor=actor.describe(), action=action, target=target, namespace=namespace, changes=changes or {}
    )
