from django.apps import AppConfig


class ApiKeysConfig(AppConfig):
    name = "apikeys"
    verbose_name = "Access"  # not "API keys", which the model already reads
