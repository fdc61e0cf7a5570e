from django.apps import AppConfig


class PeerConfig(AppConfig):
    name = "bench.peer"
    label = "peer"
    verbose_name = "DRF peer (bench only)"
