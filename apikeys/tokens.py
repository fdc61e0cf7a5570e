"""API key plaintext format: cpk_ + 30 base62 random characters + 6 base62 CRC32 characters.

30 base62 characters carry ~178 bits of entropy. The CRC32 checksum (as in GitHub's
token format) lets a mistyped or made-up key be refused without a database query;
it is not a secret and adds no security by itself.
"""

import hashlib
import secrets
import zlib

PREFIX = "cpk_"
ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
RANDOM_LENGTH = 30
CHECKSUM_LENGTH = 6
LENGTH = len(PREFIX) + RANDOM_LENGTH + CHECKSUM_LENGTH
_ALPHABET_SET = frozenset(ALPHABET)


def _base62(number: int, width: int) -> str:
    chars = []
    while number:
        number, rest = divmod(number, 62)
        chars.append(ALPHABET[rest])
    return "".join(reversed(chars)).rjust(width, ALPHABET[0])


def _checksum(body: str) -> str:
    return _base62(zlib.crc32(body.encode()), CHECKSUM_LENGTH)


def generate() -> str:
    body = "".join(secrets.choice(ALPHABET) for _ in range(RANDOM_LENGTH))
    return f"{PREFIX}{body}{_checksum(body)}"


def is_well_formed(token: str) -> bool:
    """Prefix, length, alphabet and checksum; no database involved."""
    if len(token) != LENGTH or not token.startswith(PREFIX):
        return False
    rest = token[len(PREFIX) :]
    if not _ALPHABET_SET.issuperset(rest):
        return False
    body, checksum = rest[:RANDOM_LENGTH], rest[RANDOM_LENGTH:]
    return secrets.compare_digest(_checksum(body), checksum)


def digest(token: str) -> str:
    """SHA-256 hex digest: what the database stores. Keys are high-entropy, so no slow hash is needed."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_key_id() -> str:
    return "key_" + "".join(secrets.choice(ALPHABET) for _ in range(16))
