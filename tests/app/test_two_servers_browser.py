"""Acceptance (issue 9, PostgreSQL for real): two app servers share one PostgreSQL store and lose no label.

Two ``streamlit run app.py`` processes on different ports, both with ``POOLJUDGE_DB_URL`` pointing at
one fresh database of the test session's PostgreSQL cluster.  Three annotators label the same four
pairs by keyboard: ann1 through server A and ann2 through server B, key press for key press in turn
(their labels on a pair reach the store through different processes), ann3 starts on B and finishes
on A.  The judgments in the store are then exactly the grades pressed on the passages shown, one
each, and the final labels are what those grades resolve to.
"""

from __future__ import annotations

import contextlib
import os

import pytest
from sqlalchemy import select

from db.engine import Store
from db.models import Assignment, FinalLabel, Judgment, PassageRecord, User
from db.users import add_user
from tests.app.browser_helpers import (
    PASSWORD,
    cli,
    press_grade,
    screenshot,
    serve_app,
    shown_doc,
    sign_in,
    write_beir,
)

pytestmark = pytest.mark.browser

PASSAGES = {
    "d1": "Amber passage: the Eiffel Tower is 330 metres tall.",
    "d2": "Basalt passage: Paris lies on the Seine.",
    "d3": "Cobalt passage: the tower was finished in 1889.",
    "d4": "Dune passage: French cooking uses butter.",
}
MARKERS = {d: t.split(":")[0] for d, t in PASSAGES.items()}
# the grade each annotator presses on each passage; no pair splits three ways, so no 4th annotator
PLAN = {
    "ann1": {"d1": 3, "d2": 0, "d3": 2, "d4": 1},
    "ann2": {"d1": 3, "d2": 1, "d3": 2, "d4": 1},
    "ann3": {"d1": 2, "d2": 0, "d3": 2, "d4": 1},
}
FINALS = {"d1": (3, "majority"), "d2": (0, "majority"), "d3": (2, "unanimous"), "d4": (1, "unanimous")}


@pytest.fixture(scope="module")
def two_servers(pg_databases, tmp_path_factory):
    """Servers A and B on one fresh PostgreSQL database holding the annotators, a collection imported, pooled
    and assigned through the CLI (``--db postgresql+psycopg://...``), and nothing else (no demo: it has a collection)."""
    url = pg_databases.create()
    folder = tmp_path_factory.mktemp("two-servers")
    store = Store(url, upgrade=False)
    with store.write() as s:  # all accounts in one transaction (the CLI adds one per call)
        for name in PLAN:
            add_user(s, name, PASSWORD, "annotator")
    data = write_beir(folder / "data", PASSAGES, {"q1": "eiffel tower paris"}, {"r": [("q1", d) for d in PASSAGES]})
    cli(url, "import", "-f", "beir", str(data), "-c", "shared")
    cli(url, "pool", "-c", "shared", "--name", "p", "--run", "r", "--depth", "4")
    cli(url, "assign", "-c", "shared", "--pool", "p", "--annotators", ",".join(PLAN), "--per-pair", "3", "--seed", "1")
    env = {k: v for k, v in os.environ.items() if k != "POOLJUDGE_DB"}
    env["POOLJUDGE_DB_URL"] = url
    with contextlib.ExitStack() as stack:
        stack.callback(store.dispose)
        servers = [stack.enter_context(serve_app(env, folder / f"streamlit-{n}.log")) for n in "AB"]
        yield {"A": servers[0], "B": servers[1], "store": store, "db_url": url}
    pg_databases.drop(url)


def _press(page, user: str, pressed: dict) -> None:
    """Press the planned grade on the passage shown and wait for the next item (or the end) to replace it."""
    doc = shown_doc(page, MARKERS)
    assert (user, doc) not in pressed, f"{user} was shown {doc} again"
    pressed[(user, doc)] = PLAN[user][doc]
    press_grade(page, str(PLAN[user][doc]), MARKERS[doc], timeout=60_000)


def _open(context, base_url: str, store, user: str):
    """A page of ``context`` signed in as ``user`` of ``store`` at ``base_url``: a browser session of its own (the
    context's earlier pages closed, its cookies replaced), its HTTP cache kept (the server's frontend fetched once)."""
    for old in context.pages:
        old.close()
    page = context.new_page()
    sign_in(page, base_url, store, user)
    return page


def test_two_servers_on_one_postgresql_store_keep_every_label_exact(two_servers, browser_contexts):
    pressed: dict[tuple[str, str], int] = {}
    store = two_servers["store"]
    on_a, on_b = browser_contexts.take(), browser_contexts.take()  # a browser for each server
    try:
        ann1, ann2 = _open(on_a, two_servers["A"], store, "ann1"), _open(on_b, two_servers["B"], store, "ann2")
        for _ in range(len(PASSAGES)):  # ann1 on A and ann2 on B, in turn
            _press(ann1, "ann1", pressed)
            _press(ann2, "ann2", pressed)
        for page in (ann1, ann2):
            page.get_by_text("Nothing left to label").wait_for(timeout=30_000)
        screenshot(ann2, "two-servers-done-on-B")

        ann3 = _open(on_b, two_servers["B"], store, "ann3")  # ann3: half on B ...
        for _ in range(2):
            _press(ann3, "ann3", pressed)
        # ... the rest on A, where the store says it left off: the session cookie (a host's, whatever the port)
        # signs the same browser in there, the session being in the store both servers share
        ann3.goto(two_servers["A"])
        ann3.get_by_text("Logged in as ann3").wait_for(timeout=60_000)
        for _ in range(2):
            _press(ann3, "ann3", pressed)
        ann3.get_by_text("Nothing left to label").wait_for(timeout=30_000)
    finally:
        for context in (on_a, on_b):
            browser_contexts.give_back(context)

    assert pressed == {(u, d): g for u, answers in PLAN.items() for d, g in answers.items()}
    with two_servers["store"].read() as s:
        docs = dict(s.execute(select(PassageRecord.id, PassageRecord.ext_id)).all())
        users = dict(s.execute(select(User.id, User.username)).all())
        rows = s.execute(
            select(Judgment.user_id, Judgment.passage_id, Judgment.action, Judgment.grade, Judgment.assignment_id)
        ).all()
        owner = dict(s.execute(select(Assignment.id, Assignment.user_id)).all())
        finals = {
            docs[p]: (g, m) for p, g, m in s.execute(select(FinalLabel.passage_id, FinalLabel.grade, FinalLabel.method))
        }
    assert sorted((users[u], docs[p], a, g) for u, p, a, g, _ in rows) == sorted(
        (u, d, "label", g) for (u, d), g in pressed.items()
    )  # one judgment per press, nothing else
    assert all(owner[aid] == uid for uid, _, _, _, aid in rows)  # each on the annotator's own assignment
    assert finals == FINALS
