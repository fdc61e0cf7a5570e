"""Engines: what runs the work. See base.Engine for the interface an engine implements."""

from .base import (
    Container,
    ContainerSpec,
    Engine,
    EngineError,
    EngineUnavailable,
    ExitStatus,
    Image,
    ImageNotFound,
    Limits,
)

__all__ = [
    "Container",
    "ContainerSpec",
    "Engine",
    "EngineError",
    "EngineUnavailable",
    "ExitStatus",
    "Image",
    "ImageNotFound",
    "Limits",
]
