"""Accounts: Argon2id hashes only, roles, disabling, authentication."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from db.models import User
from db.sessions import login
from db.users import add_user, get_account, list_users, set_active, set_password
from pooljudge.cli import main


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

    db = sqlite_url(tmp_path / "s.db")
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

    db = sqlite_url(tmp_path / "s.db")
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
