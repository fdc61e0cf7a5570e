"""What the OIDC modules raise; the messages are safe to show a caller."""


class OidcNotConfigured(Exception):
    pass


class ProviderUnavailable(Exception):
    """The identity provider could not be reached or answered nonsense."""


class InvalidToken(Exception):
    """The token is not acceptable; the message is safe to show the caller."""
