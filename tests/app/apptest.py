"""Helpers for AppTest page tests (the ``db`` fixture lives in conftest.py)."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import streamlit as st
from sqlalchemy import select
from streamlit.testing.v1 import AppTest

from core.types import CollectionSource, Passage, Query
from db.engine import Store, sqlite_url
from db.importer import import_collection, save_run
from db.labelling import record_judgment
from db.models import Assignment, Judgment, PassageRecord, QueryRecord
from db.users import add_user
from tests.sqlite_template import copy_store, seed_template

VIEWS = Path(__file__).resolve().parents[2] / "views"


def open_as_admin(store, script, default_timeout=30):
    """Open a page as the logged-in admin (the app keeps only the account id in the session)."""
    at = AppTest.from_file(str(script), default_timeout=default_timeout)
    at.session_state["pooljudge_user_id"] = store.admin_id
    return at.run()


def open_as(store, script, username: str | None, default_timeout=30):
    """Open a page signed in as ``username`` (an id in ``store.ids``), or signed out for None."""
    at = AppTest.from_file(str(script), default_timeout=default_timeout)
    if username is not None:
        at.session_state["pooljudge_user_id"] = store.ids[username]
    return at.run()


@contextmanager
def private_store(template: Path, ids: dict[str, int], tmp_path: Path, monkeypatch) -> Iterator[Store]:
    """A private copy of a module's seeded store (built once per module, at the newest schema).

    The pages open it through ``$POOLJUDGE_DB``; Streamlit's caches are cleared on both sides, so no page
    reads another test's store or tables.  ``store.ids`` maps usernames to account ids.
    """
    path = tmp_path / "app.db"
    shutil.copyfile(template, path)
    monkeypatch.delenv("POOLJUDGE_DB_URL", raising=False)
    monkeypatch.setenv("POOLJUDGE_DB", str(path))
    st.cache_resource.clear()
    st.cache_data.clear()
    store = Store(sqlite_url(path), upgrade=False)  # module templates are copies of the migrated template
    store.ids = ids
    try:
        yield store
    finally:
        store.dispose()
        st.cache_resource.clear()
        st.cache_data.clear()


def pair_ids(session, qid: str, doc: str) -> tuple[int, int]:
    """The row ids of the query ``qid`` and the passage ``doc`` (external ids)."""
    q = session.scalar(select(QueryRecord.id).where(QueryRecord.ext_id == qid))
    d = session.scalar(select(PassageRecord.id).where(PassageRecord.ext_id == doc))
    return q, d


def judge(store, user_id: int, qid: str, doc: str, grade: int | None, **kw) -> None:
    """``record_judgment`` on the account's labelling assignment of the pair (``kw``: action, note, elapsed_ms...)."""
    with store.write() as s:
        q, d = pair_ids(s, qid, doc)
        aid = s.scalar(
            select(Assignment.id).where(
                Assignment.user_id == user_id, Assignment.query_id == q, Assignment.passage_id == d
            )
        )
        record_judgment(s, user_id, aid, grade, **kw)


def import_tiny_collection(session, *, run: str = "bm25") -> None:
    """Collection ``c``: passages d0-d2, the query q1 (no qrels) and a run ``run`` ranking d0 then d1."""
    import_collection(
        session,
        CollectionSource(
            passages=lambda: iter([Passage(f"d{i}", f"passage {i}") for i in range(3)]),
            queries=lambda: iter([Query("q1", "query one")]),
            qrels=lambda: iter(()),
        ),
        name="c",
        format="test",
        location="mem",
    )
    save_run(session, "c", run, {"q1": {"d0": 2.0, "d1": 1.0}})


def record_launches(monkeypatch) -> list[int]:
    """Jobs the page launches are recorded (their ids, in order) instead of run."""
    import pooljudge.jobs

    launched: list[int] = []
    monkeypatch.setattr(pooljudge.jobs, "launch", lambda store, job_id: launched.append(job_id))
    return launched


def judgment_rows(store, user_id: int | None = None) -> list[tuple]:
    """Every stored judgment (of ``user_id`` only, if given) as ``(passage ext id, action, grade, note)``, in order."""
    query = select(PassageRecord.ext_id, Judgment.action, Judgment.grade, Judgment.note).join(
        PassageRecord, PassageRecord.id == Judgment.passage_id
    )
    if user_id is not None:
        query = query.where(Judgment.user_id == user_id)
    with store.read() as s:
        return [tuple(r) for r in s.execute(query.order_by(Judgment.id))]


def open_as_new_account(store, script, username: str, role: str, default_timeout=30):
    """Add an account (``username``, ``role``) to the store and open the page signed in as it."""
    with store.write() as s:
        user_id = add_user(s, username, "correct horse", role).id
    at = AppTest.from_file(str(script), default_timeout=default_timeout)
    at.session_state["pooljudge_user_id"] = user_id
    return at.run()


def open_tab(at: AppTest, key: str, label: str) -> AppTest:
    """Switch the lazy tabs ``key`` (``st.tabs(key=..., on_change="rerun")``) to ``label`` and rerun the page.

    Only the open tab's body runs, so a test opens the tab whose widgets and tables it reads.
    """
    at.session_state[key] = label
    return at.run()


def run_launches_inline(monkeypatch) -> list[int]:
    """Jobs the page launches run to the end in this process, before the launch returns (their ids, in order)."""
    import pooljudge.jobs

    launched: list[int] = []

    def launch(store, job_id: int) -> None:
        launched.append(job_id)
        pooljudge.jobs.run_job(store, job_id)

    monkeypatch.setattr(pooljudge.jobs, "launch", launch)
    return launched


def admin_seeded_file(template: Path, folder: Path, seed: Callable[[Store], object]) -> tuple[Path, int]:
    """A store file with an ``admin`` account and what ``seed(store)`` writes, built once (a module fixture's
    work): ``(file, admin id)``; each test opens a copy (:func:`page_store`)."""
    admin: list[int] = []

    def write(url: str) -> None:
        store = Store(url, upgrade=False)
        with store.write() as s:
            admin.append(add_user(s, "admin", "correct horse", "admin").id)
        seed(store)
        store.dispose()

    return seed_template(template, folder, write), admin[0]


def page_store(seeded: tuple[Path, int], tmp_path: Path, monkeypatch) -> Iterator[Store]:
    """A copy of :func:`admin_seeded_file`'s store for one test, the one the pages under AppTest open
    (``store.admin_id``); a fixture yields from it."""
    path = copy_store(seeded[0], tmp_path / "app.db")
    monkeypatch.delenv("POOLJUDGE_DB_URL", raising=False)
    monkeypatch.setenv("POOLJUDGE_DB", str(path))
    st.cache_resource.clear()
    store = Store(sqlite_url(path), upgrade=False)
    store.admin_id = seeded[1]  # type: ignore[attr-defined]
    yield store
    store.dispose()
    st.cache_resource.clear()
