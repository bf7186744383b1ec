"""Accounts: Argon2id hashes only, roles, disabling, authentication."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from db.models import User
from db.sessions import login
from db.users import add_user, get_account, list_users, set_active, set_password
from pooljudge.cli import main
from tests.sqlite_template import fresh_sqlite


def test_passwords_are_stored_only_as_salted_argon2id_hashes(store):
    with store.write() as s:
        add_user(s, "ann", "correct horse", "annotator")
        add_user(s, "bob", "correct horse", "reviewer")
    with store.read() as s:
        hashes = dict(s.execute(select(User.username, User.password_hash)).all())
    assert all(h.startswith("$argon2id$") and "correct horse" not in h for h in hashes.values())
    assert hashes["ann"] != hashes["bob"]  # same password, different salts


def test_login_roles_and_disable(store):
    with store.write() as s:
        ann = add_user(s, "ann", "correct horse", "annotator")
    assert login(store, "ann", "correct horse").account == ann
    assert login(store, "ann", "wrong horse").account is None
    assert login(store, "nobody", "correct horse").account is None
    with store.write() as s:
        set_active(s, "ann", False)
    assert login(store, "ann", "correct horse").account is None
    with store.write() as s:
        assert get_account(s, ann.id) is None
        set_active(s, "ann", True)
        set_password(s, "ann", "battery staple")
    assert login(store, "ann", "battery staple").account == ann


def test_bad_accounts_are_refused(store):
    with store.write() as s:
        add_user(s, "ann", "correct horse", "annotator")
        with pytest.raises(ValueError, match="already exists"):
            add_user(s, "ann", "correct horse", "annotator")
        with pytest.raises(ValueError, match="role must be one of"):
            add_user(s, "eve", "correct horse", "root")
        with pytest.raises(ValueError, match="at least 8"):
            add_user(s, "eve", "short", "annotator")


def test_user_cli(tmp_path, capsys, monkeypatch):
    from db.engine import sqlite_url

    db = sqlite_url(fresh_sqlite(tmp_path / "s.db"))
    monkeypatch.setenv("POOLJUDGE_PASSWORD", "correct horse")
    assert main(["--db", db, "user", "add", "ann", "--role", "annotator"]) == 0
    assert main(["--db", db, "user", "add", "rev", "--role", "reviewer"]) == 0
    assert main(["--db", db, "user", "disable", "ann"]) == 0
    capsys.readouterr()
    assert main(["--db", db, "user", "list"]) == 0
    assert capsys.readouterr().out.splitlines() == ["ann\tannotator\tdisabled", "rev\treviewer\tactive"]
    assert main(["--db", db, "user", "add", "ann", "--role", "annotator"]) == 1
    from db.engine import Store

    store = Store(db)
    with store.read() as s:
        assert [a.username for a in list_users(s)] == ["ann", "rev"]
    store.dispose()


def test_user_cli_role_disable_and_passwd_sign_the_account_out(tmp_path, capsys, monkeypatch):
    from db.engine import Store, sqlite_url
    from db.sessions import account_for_token, create_session

    db = sqlite_url(fresh_sqlite(tmp_path / "s.db"))
    monkeypatch.setenv("POOLJUDGE_PASSWORD", "correct horse")
    assert main(["--db", db, "user", "add", "rev", "--role", "reviewer"]) == 0
    store = Store(db)

    def signed_in() -> str:
        with store.write() as s:
            return create_session(s, list_users(s)[0].id)

    def role_of(token: str) -> str | None:
        with store.read() as s:
            account = account_for_token(s, token)
        return account.role if account else None

    token = signed_in()
    assert role_of(token) == "reviewer"
    assert main(["--db", db, "user", "role", "rev"]) == 1  # no silent default role
    assert role_of(token) == "reviewer"
    assert main(["--db", db, "user", "role", "rev", "--role", "annotator"]) == 0
    assert role_of(token) is None
    token = signed_in()
    assert role_of(token) == "annotator"
    assert main(["--db", db, "user", "disable", "rev"]) == 0
    assert role_of(token) is None
    assert main(["--db", db, "user", "enable", "rev"]) == 0
    assert role_of(token) is None  # enabling does not revive old sessions
    token = signed_in()
    assert main(["--db", db, "user", "passwd", "rev"]) == 0
    assert role_of(token) is None
    assert "'rev' is now annotator; its sessions are signed out" in capsys.readouterr().out
    store.dispose()


def test_usernames_are_unique_regardless_of_case_and_sign_in_exactly(store):
    with store.write() as s:
        admin = add_user(s, "admin0", "correct horse", "admin")
    for other in ("ADMIN0", "Admin0"):
        with pytest.raises(ValueError) as raised:
            with store.write() as s:
                add_user(s, other, "correct horse", "admin")
        assert (
            str(raised.value)
            == f"user {other!r} already exists as 'admin0' (usernames are compared regardless of case)"
        )
    with store.write() as s:
        ümit = add_user(s, "Ümit", "correct horse", "annotator")
        with pytest.raises(ValueError, match="already exists as 'Ümit'"):
            add_user(s, "ümit", "correct horse", "annotator")  # folded in Python: SQLite's lower() is ASCII-only
    with store.read() as s:
        assert [a.username for a in list_users(s)] == ["admin0", "Ümit"]
    # signing in is exact: the name typed is the name stored
    assert login(store, "admin0", "correct horse").account == admin
    assert login(store, "ADMIN0", "correct horse").account is None
    assert login(store, "Ümit", "correct horse").account == ümit


def test_the_case_insensitive_index_backs_up_the_check(store, monkeypatch):
    import db.users

    with store.write() as s:
        add_user(s, "admin0", "correct horse", "admin")
    monkeypatch.setattr(
        db.users, "_taken", lambda _session, _name, calls=[]: calls.append(1) or (None if len(calls) == 1 else "admin0")
    )
    with pytest.raises(ValueError) as raised:
        with store.write() as s:
            add_user(s, "ADMIN0", "correct horse", "admin")
    assert str(raised.value) == "user 'ADMIN0' already exists as 'admin0' (usernames are compared regardless of case)"
    with store.read() as s:
        assert [a.username for a in list_users(s)] == ["admin0"]


@pytest.mark.parametrize(
    ("username", "message"),
    [
        ("", "username must not be empty"),
        (" ann", "username ' ann' has leading or trailing whitespace; remove it"),
        ("ann\tx", r"username 'ann\tx' contains a control character (U+0009) at position 4; names must be printable"),
        ("ann\n", r"username 'ann\n' contains a control character (U+000A) at position 4; names must be printable"),
        (
            "a\x1b[2J",
            r"username 'a\x1b[2J' contains a control character (U+001B) at position 2; names must be printable",
        ),
        ("u" * 5_000, "username is 5,000 characters long; the limit is 100"),
    ],
)
def test_usernames_must_be_printable_trimmed_and_short(store, username, message):
    with pytest.raises(ValueError) as raised:
        with store.write() as s:
            add_user(s, username, "correct horse", "annotator")
    assert str(raised.value) == message
    with store.read() as s:
        assert list_users(s) == []


def test_user_list_prints_stored_names_escaped(tmp_path, capsys):
    from sqlalchemy import insert

    from db.engine import Store, sqlite_url

    db = sqlite_url(fresh_sqlite(tmp_path / "s.db"))
    store = Store(db)
    with store.write() as s:  # stored before names were checked
        s.execute(insert(User).values(username="evil\n\x1b[2Jroot\tx", password_hash="-", role="admin", active=True))
    store.dispose()
    capsys.readouterr()
    assert main(["--db", db, "user", "list"]) == 0
    assert capsys.readouterr().out == "evil\\n\\x1b[2Jroot\\tx\tadmin\tactive\n"


def test_user_add_cli_refuses_a_bad_name_before_asking_for_the_password(tmp_path, capsys, monkeypatch):
    import getpass

    from db.engine import sqlite_url

    db = sqlite_url(fresh_sqlite(tmp_path / "s.db"))
    monkeypatch.delenv("POOLJUDGE_PASSWORD", raising=False)
    monkeypatch.setattr(getpass, "getpass", lambda _prompt: pytest.fail("asked for a password"))
    assert main(["--db", db, "user", "add", "ann\tx"]) == 1
    assert capsys.readouterr().err == (
        "error: username 'ann\\tx' contains a control character (U+0009) at position 4; names must be printable\n"
    )
    monkeypatch.setenv("POOLJUDGE_PASSWORD", "correct horse")
    assert main(["--db", db, "user", "add", "admin0", "--role", "admin"]) == 0
    assert main(["--db", db, "user", "add", "ADMIN0", "--role", "admin"]) == 1
    assert capsys.readouterr().err == (
        "error: user 'ADMIN0' already exists as 'admin0' (usernames are compared regardless of case)\n"
    )
