"""Production hashes keep argon2-cffi's RFC 9106 parameters; only the test suite hashes cheaply."""

from __future__ import annotations

import os
import subprocess
import sys

from argon2 import PasswordHasher
from argon2.profiles import RFC_9106_LOW_MEMORY

from core import passwords
from tests.conftest import REPO


def test_production_parameters_are_argon2_cffis_rfc_9106_defaults():
    params = passwords.make_hasher(cheap=False)
    assert (params.time_cost, params.memory_cost, params.parallelism) == (3, 65536, 4)
    assert (params.hash_len, params.salt_len) == (32, 16)
    assert passwords.make_hasher(cheap=False).hash("correct horse").startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    assert RFC_9106_LOW_MEMORY.memory_cost == PasswordHasher().memory_cost == 65536


def _hash_in_a_new_process(env: dict[str, str]) -> str:
    """``hash_password('correct horse')`` computed by a fresh Python process with environment ``env``."""
    return subprocess.run(
        [sys.executable, "-c", "from core.passwords import hash_password; print(hash_password('correct horse'))"],
        cwd=REPO,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def test_a_process_without_the_variable_hashes_at_production_cost():
    env = {k: v for k, v in os.environ.items() if k != passwords.TEST_PARAMETERS_ENV}
    assert _hash_in_a_new_process(env).startswith("$argon2id$v=19$m=65536,t=3,p=4$")


def test_only_the_value_1_turns_it_cheap():
    env = {**os.environ, passwords.TEST_PARAMETERS_ENV: "yes"}
    assert _hash_in_a_new_process(env).startswith("$argon2id$v=19$m=65536,t=3,p=4$")


def test_the_suite_hashes_cheaply_and_cheap_hashes_still_verify():
    stored = passwords.hash_password("correct horse")
    assert stored.startswith("$argon2id$v=19$m=8,t=1,p=1$")
    assert passwords.verify_password(stored, "correct horse") and not passwords.verify_password(stored, "wrong horse")
    # a production server meeting a test-cost hash verifies it and asks for a rehash at production cost
    production = passwords.make_hasher(cheap=False)
    assert production.verify(stored, "correct horse") and production.check_needs_rehash(stored)
