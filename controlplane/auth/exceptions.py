"""What authenticators raise; a module of its own so that every authenticator can import it."""


class AuthenticationFailed(Exception):
    """The credential was presented but is not valid; the message is safe to show."""
