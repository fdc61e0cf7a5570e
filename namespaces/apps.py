from django.apps import AppConfig


class NamespacesConfig(AppConfig):
    name = "namespaces"
    verbose_name = "Tenancy"  # not "Namespaces", which the model already reads
