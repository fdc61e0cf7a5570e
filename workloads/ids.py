"""Public ids: a type prefix and 20 random characters of [0-9a-z] (~103 bits), never a database pk.

Lower case only, so that an id can be a DNS label (preview URLs use it).
"""

import secrets
import string

ALPHABET = string.digits + string.ascii_lowercase
RANDOM_LENGTH = 20
MAX_LENGTH = 32


def new_id(prefix: str) -> str:
    return f"{prefix}_" + "".join(secrets.choice(ALPHABET) for _ in range(RANDOM_LENGTH))


def new_secret(prefix: str, length: int = 40) -> str:
    return f"{prefix}_" + "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(length))
