"""Look-alike usernames are refused; names are NFKC-normalised on creation and sign-in (issue 21, acceptance 4)."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from db.models import User
from db.sessions import login
from db.users import add_user, list_users
from tests.sqlite_template import copy_store

PASSWORD = "correct horse"


@pytest.fixture
def admin(store):
    with store.write() as s:
        return add_user(s, "admin", PASSWORD, "admin")


def _rows(store) -> list[tuple[int, str, str]]:
    with store.read() as s:
        return [tuple(r) for r in s.execute(select(User.id, User.username, User.password_hash).order_by(User.id))]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("аdmin", "username 'аdmin' ('\\u0430dmin') looks like the existing user 'admin'"),  # Cyrillic а
        (
            "ａｄｍｉｎ",
            "username 'ａｄｍｉｎ' ('\\uff41\\uff44\\uff4d\\uff49\\uff4e') looks like the existing user 'admin'",
        ),
        ("AdmIn", "user 'AdmIn' already exists as 'admin' (usernames are compared regardless of case)"),
        ("adrnin", "username 'adrnin' looks like the existing user 'admin'"),
    ],
)
def test_a_look_alike_of_an_existing_name_is_refused_and_the_store_is_unchanged(store, admin, name, message):
    before = _rows(store)
    with pytest.raises(ValueError) as err, store.write() as s:
        add_user(s, name, PASSWORD, "annotator")
    assert str(err.value) == message
    assert _rows(store) == before


def test_a_new_name_is_stored_nfkc_normalised(store, admin):
    with store.write() as s:
        bob = add_user(s, "ｂｏｂ", PASSWORD, "annotator")
    assert bob.username == "bob"
    with store.read() as s:
        assert [a.username for a in list_users(s)] == ["admin", "bob"]


def test_sign_in_normalises_the_typed_name_and_stays_exact_otherwise(store, admin):
    assert login(store, "ａｄｍｉｎ", PASSWORD).account == admin
    assert login(store, "аdmin", PASSWORD).account is None  # another name, which cannot exist beside admin
    assert login(store, "ADMIN", PASSWORD).account is None  # case stays exact


def test_a_name_stored_before_normalisation_still_signs_in(store):
    """Stores made before this rule may hold a non-NFKC name: it signs in as typed or by its NFKC form."""
    with store.write() as s:
        add_user(s, "carol", PASSWORD, "annotator")
        s.execute(User.__table__.update().where(User.username == "carol").values(username="ｃａｒｏｌ"))
    for typed in ("ｃａｒｏｌ", "carol"):
        result = login(store, typed, PASSWORD)
        assert result.account is not None and result.account.username == "ｃａｒｏｌ"
    with pytest.raises(ValueError, match="looks like the existing user 'ｃａｒｏｌ'"), store.write() as s:
        add_user(s, "carol", PASSWORD, "annotator")
    with store.read() as s:
        assert s.scalar(select(func.count()).select_from(User)) == 1


def test_the_cli_refuses_a_look_alike_and_names_the_stored_form(tmp_path, capsys, monkeypatch, sqlite_template):
    from db.engine import Store, sqlite_url
    from pooljudge.cli import main

    db = sqlite_url(copy_store(sqlite_template, tmp_path / "s.db"))
    monkeypatch.setenv("POOLJUDGE_PASSWORD", PASSWORD)
    assert main(["--db", db, "user", "add", "admin", "--role", "admin"]) == 0
    capsys.readouterr()
    assert main(["--db", db, "user", "add", "аdmin", "--role", "annotator"]) == 1
    assert capsys.readouterr().err.strip() == (
        "error: username 'аdmin' ('\\u0430dmin') looks like the existing user 'admin'"
    )
    assert main(["--db", db, "user", "add", "ｂｏｂ", "--role", "annotator"]) == 0
    assert capsys.readouterr().out.strip() == "added annotator 'bob'"
    store = Store(db)
    with store.read() as s:
        assert [(a.username, a.role) for a in list_users(s)] == [("admin", "admin"), ("bob", "annotator")]
    store.dispose()
