"""Acceptance (issue 9, items 1 and 2): a grade lands on the item shown, and revocation reaches open pages.

Reproduces, in Chromium against the real app:

- 1a: one annotator, two tabs on the same item; tab 1 labels it, tab 2 presses a key on it: nothing is stored
  on an item tab 2 never displayed, tab 2 says why and moves on;
- 1b: an adjudication assignment arrives (three others split on a pair) while an item is on screen: the key
  press lands on the item shown, and the adjudication comes next;
- 2: an account disabled from the CLI while its Annotate page is open stores nothing at the next key press
  and is signed out; a reviewer's Metrics page stops refreshing the leaderboard within one refresh once the
  account is disabled or demoted.

On the shared server (``app_server``) with accounts and a collection of this module's own: these tests disable
and demote accounts, which must not sign the other browser tests out.  Every test asserts against the judgments table exactly which
(query, passage, action, grade) rows each user has.
"""

from __future__ import annotations

import re
import time

import pytest
from sqlalchemy import select, update

from db.adjudication import set_pool_adjudicators
from db.engine import Store, sqlite_url
from db.labelling import record_judgment
from db.models import Assignment, Collection, FinalLabel, Judgment, PassageRecord, QueryRecord, User
from db.resolution import override_label
from tests.app.browser_helpers import (
    ALPHA_PASSAGES,
    LIVE_REFRESH_SECONDS,
    add_users,
    cli,
    markers_of,
    ready_for_keys,
    screenshot,
    shown_doc,
    sign_in,
    wait_for_js,
    wait_gone,
    write_beir,
)

pytestmark = pytest.mark.browser

PASSAGES = ALPHA_PASSAGES  # d1 to d6, one marker word each, so the page shows which item it is
MARKERS = markers_of(PASSAGES)
QUERIES = {"q1": "how tall is the eiffel tower", "q2": "what to see in paris", "q3": "paris food"}
MAIN = '[data-testid="stMain"]'
SIGNED_OUT = re.compile(r"signed out|do not have access", re.I)


RUNS = {
    "tabs": [("q1", "d1"), ("q1", "d2"), ("q1", "d3")],
    "mine": [("q2", "d4")],
    "split": [("q2", "d5")],
    "sam": [("q3", "d6"), ("q3", "d1"), ("q3", "d2")],
}
# after the shared store's demo collection by name: the pages of other modules still open on that one first
COLLECTION = "tabs-binding"
# this module's accounts on the shared server: the tests disable and demote them, never another module's
ANN1, ANN2, ANN3, ANN4, SAM = "bind-ann1", "bind-ann2", "bind-ann3", "bind-ann4", "bind-sam"
REV1, REV2 = "bind-rev1", "bind-rev2"
ACCOUNTS = {**dict.fromkeys((ANN1, ANN2, ANN3, ANN4, SAM), "annotator"), REV1: "reviewer", REV2: "reviewer"}
# pool (pooled from the run of that name) -> (its annotators, annotators per pair)
HOLDERS = {"tabs": (ANN1, 1), "mine": (ANN4, 1), "split": (f"{ANN1},{ANN2},{ANN3}", 3), "sam": (SAM, 1)}


def _pool_and_assign(db) -> None:
    for name, (annotators, per_pair) in HOLDERS.items():
        cli(db, "pool", "-c", COLLECTION, "--name", name, "--run", name, "--depth", "3")
        assign = ["--pool", name, "--annotators", annotators, "--per-pair", str(per_pair), "--seed", "1"]
        cli(db, "assign", "-c", COLLECTION, *assign)
    setup = Store(sqlite_url(db))
    with setup.write() as s:  # ann4 holds no pair of "split": listed as its adjudicator (issue 11)
        set_pool_adjudicators(s, COLLECTION, "split", [ANN4])
    setup.dispose()


@pytest.fixture(scope="module")
def server(app_server, tmp_path_factory):
    """The shared server, its store holding this module's accounts and collection ``tabs-binding``.

    Pools and holders: ``tabs`` (q1: d1, d2, d3) -> ann1; ``mine`` (q2, d4) -> ann4; ``split`` (q2, d5) ->
    ann1, ann2, ann3; ``sam`` (q3: d6, d1, d2) -> sam.  A three-way split on (q2, d5) goes to ann4, the
    adjudicator an admin listed for ``split`` (the pool's own three annotators all labelled it).
    """
    folder = tmp_path_factory.mktemp("binding")
    db = app_server["db"]
    add_users(db, ACCOUNTS)
    cli(db, "import", "-f", "beir", str(write_beir(folder / "data", PASSAGES, QUERIES, RUNS)), "-c", COLLECTION)
    _pool_and_assign(db)
    return app_server


def _rows(store, username: str) -> list[tuple]:
    """The user's judgments as (qid, docid, action, grade), oldest first: exactly what the store holds."""
    with store.read() as s:
        return [
            tuple(r)
            for r in s.execute(
                select(QueryRecord.ext_id, PassageRecord.ext_id, Judgment.action, Judgment.grade)
                .join(QueryRecord, QueryRecord.id == Judgment.query_id)
                .join(PassageRecord, PassageRecord.id == Judgment.passage_id)
                .join(User, User.id == Judgment.user_id)
                .where(User.username == username)
                .order_by(Judgment.id)
            )
        ]


def _stored(store, username: str, n: int, timeout: float = 30) -> list[tuple]:
    """:func:`_rows` once they are ``n`` (or after ``timeout`` s): the page shows the next item before the
    answer reaches the store (the browser's queue sends it in the background)."""
    deadline = time.monotonic() + timeout
    while len(rows := _rows(store, username)) < n and time.monotonic() < deadline:
        time.sleep(0.2)
    return rows


def _shown(page) -> str:
    return shown_doc(page, MARKERS)


def _wait_gone(page, doc: str) -> None:
    wait_gone(page, MARKERS[doc])


def _pair_of(store, username: str, purpose: str) -> list[tuple[str, str]]:
    with store.read() as s:
        return [
            tuple(r)
            for r in s.execute(
                select(QueryRecord.ext_id, PassageRecord.ext_id)
                .select_from(Assignment)
                .join(QueryRecord, QueryRecord.id == Assignment.query_id)
                .join(PassageRecord, PassageRecord.id == Assignment.passage_id)
                .join(User, User.id == Assignment.user_id)
                .where(User.username == username, Assignment.purpose == purpose)
            )
        ]


def test_1a_a_second_tab_on_a_labelled_item_stores_nothing_and_moves_on(server, new_page):
    store = server["store"]
    tab1, tab2 = new_page(), new_page()
    for tab in (tab1, tab2):
        sign_in(tab, server["url"], server["store"], ANN1)
    first = _shown(tab1)
    assert _shown(tab2) == first and first in ("d1", "d2", "d3")  # both tabs show the same item
    for tab in (tab1, tab2):
        ready_for_keys(tab)

    tab1.keyboard.press("3")
    _wait_gone(tab1, first)
    second = _shown(tab1)
    assert _stored(store, ANN1, 1) == [("q1", first, "label", 3)]

    assert _shown(tab2) == first  # tab 2 still shows the item tab 1 labelled
    tab2.keyboard.press("0")
    tab2.get_by_text("already labelled").wait_for(timeout=30_000)  # refused, visibly
    _wait_gone(tab2, first)
    assert _shown(tab2) == second  # moved on to the item that is next now
    screenshot(tab2, "binding-stale-tab")
    assert _rows(store, ANN1) == [("q1", first, "label", 3)]  # nothing stored on anything tab 2 never showed

    # the next key press in tab 2 is an ordinary label on the item it shows
    ready_for_keys(tab2)
    tab2.keyboard.press("1")
    _wait_gone(tab2, second)
    assert _stored(store, ANN1, 2) == [("q1", first, "label", 3), ("q1", second, "label", 1)]


def test_1b_an_adjudication_arriving_meanwhile_never_takes_the_key_press(server, new_page):
    store = server["store"]
    page = new_page()
    sign_in(page, server["url"], server["store"], ANN4)
    assert _shown(page) == "d4"  # ann4's own item (q2, d4)
    ready_for_keys(page)

    # from outside, while d4 is on screen: three annotators split on (q2, d5), which ann4 does not hold
    with store.write() as s:
        users = dict(s.execute(select(User.username, User.id)).all())
        for name, grade in ((ANN1, 0), (ANN2, 1), (ANN3, 2)):
            aid = s.scalar(
                select(Assignment.id)
                .join(PassageRecord, PassageRecord.id == Assignment.passage_id)
                .where(Assignment.user_id == users[name], PassageRecord.ext_id == "d5")
            )
            record_judgment(s, users[name], aid, grade)
    assert _pair_of(store, ANN4, "fourth") == [("q2", "d5")]  # the adjudication is ann4's now

    page.keyboard.press("2")
    _wait_gone(page, "d4")
    assert _stored(store, ANN4, 1) == [("q2", "d4", "label", 2)]  # on the item shown, not the adjudication
    assert _shown(page) == "d5"
    page.get_by_text("Adjudication").first.wait_for(timeout=30_000)
    screenshot(page, "binding-adjudication-next")

    ready_for_keys(page)
    page.keyboard.press("1")
    page.get_by_text("Nothing left to label").wait_for(timeout=30_000)
    assert _stored(store, ANN4, 2) == [("q2", "d4", "label", 2), ("q2", "d5", "label", 1)]
    with store.read() as s:
        final = s.execute(
            select(FinalLabel.grade, FinalLabel.method, FinalLabel.n_labels)
            .join(PassageRecord, PassageRecord.id == FinalLabel.passage_id)
            .join(Collection, Collection.id == PassageRecord.collection_id)
            .where(Collection.name == COLLECTION, PassageRecord.ext_id == "d5")
        ).one()
    assert tuple(final) == (1, "adjudicated", 4)


def test_2_a_disabled_annotators_open_page_stores_nothing_and_signs_out(server, new_page):
    store = server["store"]
    page = new_page()
    sign_in(page, server["url"], server["store"], SAM)
    shown = _shown(page)
    assert shown in ("d6", "d1", "d2")
    ready_for_keys(page)
    cli(server["db"], "user", "disable", SAM)
    try:
        page.keyboard.press("3")
        page.get_by_text(SIGNED_OUT).first.wait_for(timeout=30_000)
        screenshot(page, "binding-disabled-annotator")
        assert MARKERS[shown] not in page.locator(MAIN).inner_text()  # the item is gone with the session
        assert _rows(store, SAM) == []
    finally:
        cli(server["db"], "user", "enable", SAM)


def _open_live_leaderboard(page, server, username: str) -> None:
    # signed in on the page the link names
    sign_in(page, server["url"], server["store"], username, path=f"/metrics?collection={COLLECTION}")
    page.get_by_text(f"Refresh every {LIVE_REFRESH_SECONDS} s").wait_for(timeout=60_000)
    page.get_by_text(re.compile(r"judged quer\w+ \(live final labels\)")).wait_for(timeout=60_000)


def test_2_a_disabled_or_demoted_reviewers_metrics_page_stops_refreshing(server, new_page):
    store = server["store"]
    with store.write() as s:  # a live final label, so the leaderboard has something to show
        admin = s.scalar(select(User.id).where(User.username == "admin"))
        bind = s.scalar(select(Collection.id).where(Collection.name == COLLECTION))
        q = s.scalar(select(QueryRecord.id).where(QueryRecord.collection_id == bind, QueryRecord.ext_id == "q3"))
        d = s.scalar(select(PassageRecord.id).where(PassageRecord.collection_id == bind, PassageRecord.ext_id == "d6"))
        override_label(s, admin, q, d, 2, "seed the live leaderboard")
    disabled, demoted = new_page(), new_page()
    _open_live_leaderboard(disabled, server, REV1)
    _open_live_leaderboard(demoted, server, REV2)
    board = re.compile(r"judged quer\w+ \(live final labels\)")

    cli(server["db"], "user", "disable", REV1)
    # a role change that leaves the browser session in place: only the fragment's own check can stop it
    with store.write() as s:
        s.execute(update(User).where(User.username == REV2).values(role="annotator"))
    try:
        for page in (disabled, demoted):  # no interaction: the refresh alone must notice
            page.get_by_text(SIGNED_OUT).first.wait_for(timeout=35_000)
            wait_for_js(page, "(t) => !document.body.innerText.match(new RegExp(t))", arg=board.pattern, timeout=15_000)
        screenshot(demoted, "binding-demoted-reviewer-metrics")
        # and it stays stopped through the next refreshes
        demoted.wait_for_timeout(2_500 * LIVE_REFRESH_SECONDS)
        assert not board.search(demoted.inner_text("body"))
        assert SIGNED_OUT.search(demoted.inner_text("body"))
    finally:
        cli(server["db"], "user", "enable", REV1)
        with store.write() as s:
            s.execute(update(User).where(User.username == REV2).values(role="reviewer"))
