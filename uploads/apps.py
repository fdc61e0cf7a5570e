from django.apps import AppConfig


class UploadsConfig(AppConfig):
    name = "uploads"
    verbose_name = "Storage"  # not "Uploads", which a model already reads
    default_auto_field = "django.db.models.BigAutoField"
