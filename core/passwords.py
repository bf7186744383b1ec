"""Password hashing with Argon2id (argon2-cffi), the only form in which passwords are stored."""

from __future__ import annotations

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

_HASHER = PasswordHasher()  # argon2-cffi's defaults follow RFC 9106's recommendations

MIN_LENGTH = 8


def hash_password(password: str) -> str:
    """A salted Argon2id hash of ``password`` (PHC string format, parameters included)."""
    if len(password) < MIN_LENGTH:
        raise ValueError(f"a password needs at least {MIN_LENGTH} characters")
    return _HASHER.hash(password)


def verify_password(stored_hash: str, password: str) -> bool:
    """Whether ``password`` matches ``stored_hash`` (constant-time; False for a malformed hash)."""
    try:
        return _HASHER.verify(stored_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def needs_rehash(stored_hash: str) -> bool:
    """Whether the hash was made with weaker parameters than today's defaults."""
    return _HASHER.check_needs_rehash(stored_hash)
