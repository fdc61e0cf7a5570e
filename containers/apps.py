from django.apps import AppConfig


class ContainersConfig(AppConfig):
    name = "containers"
    verbose_name = "Containers"
