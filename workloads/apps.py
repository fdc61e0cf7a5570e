from django.apps import AppConfig


class WorkloadsConfig(AppConfig):
    """Jobs, sandboxes, environments, workspaces and egress (proto package containers.api.v1).

    The label stays "containers", so the tables, migrations and admin URLs are unchanged.
    """

    name = "workloads"
    label = "containers"
    verbose_name = "Containers"
