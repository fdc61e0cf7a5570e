from .principal import Kind, Principal, Role

__all__ = ["Kind", "Principal", "Role"]
