"""Password hashing with Argon2id (argon2-cffi), the only form in which passwords are stored."""

from __future__ import annotations

import os

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

#: Set to ``1`` by the test suite (tests/conftest.py), before this module is imported, so that the hundreds
#: of accounts the tests create cost microseconds instead of ~50 ms each; read once, when the hasher is built.
TEST_PARAMETERS_ENV = "POOLJUDGE_TEST_CHEAP_ARGON2"


def make_hasher(*, cheap: bool | None = None) -> PasswordHasher:
    """The Argon2id hasher: argon2-cffi's defaults (RFC 9106's low-memory profile) unless ``cheap``.

    ``cheap=None`` reads :data:`TEST_PARAMETERS_ENV`.  The cheap parameters
    (one pass over 8 KiB, one lane) are for tests only: they keep the hash's
    shape (Argon2id, 16-byte salt, 32-byte hash) so the tests still check
    what is stored, but they give no protection against guessing.
    """
    if cheap is None:
        cheap = os.environ.get(TEST_PARAMETERS_ENV) == "1"
    if cheap:
        return PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
    return PasswordHasher()


_HASHER = make_hasher()

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
