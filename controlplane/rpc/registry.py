"""The routing table: procedure path → bound handler, built from settings.RPC_SERVICES."""

from __future__ import annotations

from functools import cached_property

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.module_loading import import_string

from .service import Procedure


class Registry:
    @cached_property
    def procedures(self) -> dict[str, Procedure]:
        table: dict[str, Procedure] = {}
        for dotted in settings.RPC_SERVICES:
            for procedure in import_string(dotted)().procedures():
                if procedure.path in table:
                    raise ImproperlyConfigured(f"procedure {procedure.path} is registered twice")
                table[procedure.path] = procedure
        return table

    def get(self, path: str) -> Procedure | None:
        return self.procedures.get(path)

    def reset(self) -> None:
        self.__dict__.pop("procedures", None)


registry = Registry()


@receiver(setting_changed)
def _reset_registry(*, setting, **kwargs):
    # override_settings(RPC_SERVICES=...) in tests routes to the services it names.
    if setting == "RPC_SERVICES":
        registry.reset()
