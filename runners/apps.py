from django.apps import AppConfig


class RunnersConfig(AppConfig):
    """Runners: the processes that lease work over containers.runtime.v1.RunnerService."""

    name = "runners"
    verbose_name = "Execution"  # not "Runners", which the model already reads
