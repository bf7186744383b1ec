"""Acceptance (issue 20, item 2): the Annotate page's queue in the browser, in Chromium against the real app.

- N grade keys pressed back to back, with no wait between them: every press labels the next item, and the
  store ends with exactly N judgments, the right grade on each item, in the order they were shown;
- an account disabled while answers are queued: the answer after it is refused, the page says which item
  and why, and nothing is stored after the revocation.

A server of its own on a fresh store (these tests disable an account).
"""

from __future__ import annotations

import re
import time

import pytest
from sqlalchemy import select

from db.assignments import create_assignments
from db.engine import Store
from db.labelling import next_items
from db.models import Judgment, PassageRecord, User
from tests.app.browser_helpers import (
    ALPHA_PASSAGES,
    ANSWERS_SAVED,
    QUEUE_SHOWS_ITEM,
    add_accounts,
    cli,
    import_pooled,
    markers_of,
    screenshot,
    shown_doc,
    sign_in,
    wait_for_js,
    wait_idle,
)

pytestmark = pytest.mark.browser

MARKERS = markers_of(ALPHA_PASSAGES)
# the queue has carried out its undo (or move back) and shows an item again
COMMAND_DONE = """() => { const q = document.querySelector('[data-testid="annotate-queue"]');
    return q && q.dataset.busy === "" && q.dataset.shown; }"""
PROGRESS = '[data-testid="annotate-progress"]'  # the queue's progress line of the item shown
# another item than ``prev`` (a render token) is on screen; returns the progress line drawn with it
NEXT_PROGRESS = """(prev) => { const q = document.querySelector('[data-testid="annotate-queue"]');
    return q && q.dataset.shown && q.dataset.shown !== prev
        && document.querySelector('[data-testid="annotate-progress"]').innerText; }"""
SHOWN = """() => document.querySelector('[data-testid="annotate-queue"]').dataset.shown"""


@pytest.fixture(scope="module")
def server(app_server):
    """The shared server, its store holding this module's annotators and collections: ``queue-fast`` holds all
    six passages of collection ``queue-six``; ``queue-gone`` the three of ``queue-three``, ``queue-undo`` the two
    of ``queue-two``, ``queue-prog`` the three of ``queue-counted``, ``queue-stale`` the two of ``queue-made-up``,
    ``queue-race`` the two of ``queue-raced`` (the tests disable only an account of their own)."""
    db = app_server["db"]
    store = app_server["store"]
    with store.write() as s:
        names = ("fast", "gone", "undo", "prog", "stale", "race")
        add_accounts(s, {f"queue-{name}": "annotator" for name in names})
        holders = (
            ("six", list(ALPHA_PASSAGES), "fast"),
            ("three", ["d1", "d2", "d3"], "gone"),
            ("two", ["d4", "d5"], "undo"),
            ("counted", ["d1", "d2", "d3"], "prog"),
            ("made-up", ["d4", "d5"], "stale"),
            ("raced", ["d4", "d5"], "race"),
        )
        for name, docs, holder in holders:
            passages = {d: ("q1", ALPHA_PASSAGES[d]) for d in docs}
            import_pooled(s, passages, {"q1": "tell me about paris"}, collection=f"queue-{name}")
            create_assignments(s, f"queue-{name}", "p", annotators=[f"queue-{holder}"], per_pair=1, seed=4)
    return {"url": app_server["url"], "db": db, "store": store}


def _serving_order(store, username: str) -> list[str]:
    with store.read() as s:
        uid = s.scalar(select(User.id).where(User.username == username))
        return [item.passage.split()[0] for item in next_items(s, uid, 20)]


def _rows(store, username: str) -> list[tuple]:
    """The user's judgments as (marker word, action, grade), oldest first."""
    with store.read() as s:
        rows = s.execute(
            select(PassageRecord.ext_id, Judgment.action, Judgment.grade)
            .join(PassageRecord, PassageRecord.id == Judgment.passage_id)
            .join(User, User.id == Judgment.user_id)
            .where(User.username == username)
            .order_by(Judgment.id)
        )
        return [(ALPHA_PASSAGES[d].split()[0], action, grade) for d, action, grade in rows]


def _wait_rows(store, username: str, n: int, timeout: float = 60) -> list[tuple]:
    deadline = time.monotonic() + timeout
    rows = _rows(store, username)
    while len(rows) < n and time.monotonic() < deadline:
        time.sleep(0.2)
        rows = _rows(store, username)
    return rows


def test_rapid_key_presses_each_label_the_next_item_exactly_once(server, new_page):
    store = server["store"]
    order = _serving_order(store, "queue-fast")
    assert len(order) == 6
    page = new_page()
    sign_in(page, server["url"], server["store"], "queue-fast")
    assert shown_doc(page, MARKERS) == next(d for d, m in MARKERS.items() if m.startswith(order[0]))
    wait_for_js(page, QUEUE_SHOWS_ITEM, timeout=60_000)
    grades = [3, 0, 2, 1, 1, 2]
    for grade in grades:  # back to back: no wait for the server or the page between presses
        page.keyboard.press(str(grade))
    page.get_by_text("Nothing left to label").wait_for(timeout=60_000)
    rows = _wait_rows(store, "queue-fast", len(grades))
    assert rows == [(word, "label", g) for word, g in zip(order, grades, strict=True)]
    # none dropped, none doubled: the page's own latency record has one entry per press (the page records
    # a press's time in the animation frame that draws the next item, which may run after the text shows)
    wait_for_js(page, "n => window.__pjLatency.length >= n", len(grades), timeout=30_000)
    assert page.evaluate("window.__pjLatency.length") == len(grades)
    assert page.locator('[data-testid="annotate-refusals"]').inner_text() == ""
    screenshot(page, "queue-rapid-presses")


def test_a_revoked_account_stores_nothing_more_and_the_page_says_which_item(server, new_page):
    store = server["store"]
    order = _serving_order(store, "queue-gone")
    page = new_page()
    sign_in(page, server["url"], server["store"], "queue-gone")
    wait_for_js(page, QUEUE_SHOWS_ITEM, timeout=60_000)
    page.keyboard.press("2")
    assert _wait_rows(store, "queue-gone", 1) == [(order[0], "label", 2)]
    # the page has the server's reply and no run is going on: a run still to come (the queue sends its answers
    # again after 10 s without a reply) would meet the disabled account with nothing to refuse, and sign the page
    # out before the next key reaches the server
    wait_for_js(page, ANSWERS_SAVED, timeout=60_000)
    wait_idle(page)
    cli(server["db"], "user", "disable", "queue-gone")
    try:
        page.keyboard.press("1")  # the second item was on screen at once: the answer is queued, then refused
        notice = page.get_by_text(re.compile(r"signed out", re.I)).first
        notice.wait_for(timeout=60_000)
        page.get_by_text(re.compile(r"Not stored: Item 2 of queue-gone-p\d+: this account was signed out")).wait_for(
            timeout=30_000
        )
        screenshot(page, "queue-revoked")
        # read once the refusal is on screen: the server has answered the press already
        assert _rows(store, "queue-gone") == [(order[0], "label", 2)]
        # the items went with the session: the login form instead of the queue
        assert not any(m in page.locator('[data-testid="stMain"]').inner_text() for m in MARKERS.values())
        assert page.locator('[data-testid="annotate-queue"]').count() == 0
        assert page.get_by_role("button", name="Log in").count() == 1
    finally:
        cli(server["db"], "user", "enable", "queue-gone")


def test_u_undoes_the_last_label_after_the_answers_before_it_are_stored(server, new_page):
    store = server["store"]
    order = _serving_order(store, "queue-undo")
    page = new_page()
    sign_in(page, server["url"], server["store"], "queue-undo")
    wait_for_js(page, QUEUE_SHOWS_ITEM, timeout=60_000)
    page.keyboard.press("2")
    page.keyboard.press("u")  # at once: the label is stored first, then withdrawn, and its item comes back
    wait_for_js(page, ANSWERS_SAVED, timeout=60_000)
    _wait_or_say_why(page, COMMAND_DONE, "the undo's answer", store, "queue-undo")
    first = next(d for d, m in MARKERS.items() if m.startswith(order[0]))
    assert shown_doc(page, MARKERS) == first
    assert _rows(store, "queue-undo") == [(order[0], "label", 2), (order[0], "undo", None)]
    page.keyboard.press("0")  # the item shown again takes a new label (a new token: the old one was used)
    assert _wait_rows(store, "queue-undo", 3)[-1] == (order[0], "label", 0)


# what the page's queues hold: each queue root in the page, and the queue object behind it
QUEUE_STATE = """() => [...document.querySelectorAll('[data-testid="annotate-queue"]')].map((root) => {
    const q = root.parentElement && root.parentElement.__pjQueue;
    return { dataset: { ...root.dataset }, connected: root.isConnected, live: !!q && q.root === root,
             status: root.querySelector('[data-testid="annotate-status"]')?.innerText,
             queue: q && { busy: q.busy, serial: q.serial, pending: q.pending.length, command: q.pendingCommand,
                           inFlight: q.inFlight, sinceSend: Math.round(performance.now() - q.lastSend),
                           commandDone: q.data && q.data.command_done, items: q.items.length } };
})"""


def _wait_or_say_why(page, condition: str, what: str, store: Store, user: str) -> None:
    """Wait for ``condition``; if it never holds, fail with the page's queues and the rows stored: a timeout
    alone said nothing of which side lost what (seen twice in full runs under load, never alone)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        wait_for_js(page, condition, timeout=60_000)
    except PlaywrightTimeout:
        screenshot(page, f"queue-stuck-{user}")
        pytest.fail(f"{what} never came: queues {page.evaluate(QUEUE_STATE)}; rows stored {_rows(store, user)}")


# the page's queue sends nothing to the server from here on: each message it would send is kept in __held
HOLD_MESSAGES = """() => { const q = document.querySelector('[data-testid="annotate-queue"]').parentElement.__pjQueue;
    window.__held = []; window.__deliver = q.setState; q.setState = (key, value) => window.__held.push(value); }"""
# a reply of a server run that started before the queue's last messages: none of its answers acknowledged
STALE_REPLY = """() => { const q = document.querySelector('[data-testid="annotate-queue"]').parentElement.__pjQueue;
    q.update({ ...q.data, outcomes: {} }); }"""
DELIVER = """() => { const q = document.querySelector('[data-testid="annotate-queue"]').parentElement.__pjQueue;
    q.setState = window.__deliver; q.send(); }"""


def test_an_undo_still_reaches_the_server_when_a_reply_from_before_it_arrives(server, new_page):
    """A reply to a run that started before the undo made the page send its pending answers again, without the
    undo: that message replaced the one carrying it, and the page waited for the undo for good."""
    store = server["store"]
    order = _serving_order(store, "queue-race")
    page = new_page()
    sign_in(page, server["url"], server["store"], "queue-race")
    wait_for_js(page, QUEUE_SHOWS_ITEM, timeout=60_000)
    page.evaluate(HOLD_MESSAGES)
    page.keyboard.press("2")
    page.keyboard.press("u")
    wait_for_js(page, "() => window.__held.length >= 2", timeout=30_000)  # the label's message, the undo's
    page.evaluate(STALE_REPLY)  # the label not acknowledged: it is sent again
    held = page.evaluate("() => window.__held")
    assert [len(m["answers"]) for m in held[-2:]] == [1, 1]
    assert (held[-1]["command"] or {}).get("name") == "undo"  # still carried: the server may not have read it yet
    page.evaluate(DELIVER)
    wait_for_js(page, ANSWERS_SAVED, timeout=60_000)
    wait_for_js(page, COMMAND_DONE, timeout=60_000)
    assert _rows(store, "queue-race") == [(order[0], "label", 2), (order[0], "undo", None)]


def _next_progress(page, key: str) -> str:
    """Press ``key`` and return the progress line drawn with the next item, in the same frame."""
    shown = page.evaluate(SHOWN)
    page.keyboard.press(key)
    return page.wait_for_function(NEXT_PROGRESS, arg=shown, polling="raf", timeout=60_000).json_value()


def test_the_progress_line_counts_the_labels_given_in_the_browser(server, new_page):
    store = server["store"]
    with store.read() as s:
        uid = s.scalar(select(User.id).where(User.username == "queue-prog"))
        items = next_items(s, uid, 3)
    head = f"Package {items[0].package}: "
    page = new_page()
    sign_in(page, server["url"], server["store"], "queue-prog")
    wait_for_js(page, QUEUE_SHOWS_ITEM, timeout=60_000)
    assert page.locator(PROGRESS).inner_text() == f"{head}0 of 3 labelled · item {items[0].position}"
    # drawn with the next item at once, before the server has the label: the label given here counts
    assert _next_progress(page, "2") == f"{head}1 of 3 labelled · item {items[1].position}"
    wait_for_js(page, ANSWERS_SAVED, timeout=60_000)
    # the server's count, once it has the label, is the same: not counted twice
    assert page.locator(PROGRESS).inner_text() == f"{head}1 of 3 labelled · item {items[1].position}"
    assert _next_progress(page, "1") == f"{head}2 of 3 labelled · item {items[2].position}"
    wait_for_js(page, ANSWERS_SAVED, timeout=60_000)
    assert page.locator(PROGRESS).inner_text() == f"{head}2 of 3 labelled · item {items[2].position}"
    assert [row[1:] for row in _rows(store, "queue-prog")] == [("label", 2), ("label", 1)]


def test_an_answer_with_a_token_the_page_never_issued_is_refused_and_nothing_stored(server, new_page):
    store = server["store"]
    order = _serving_order(store, "queue-stale")
    page = new_page()
    sign_in(page, server["url"], server["store"], "queue-stale")
    wait_for_js(page, QUEUE_SHOWS_ITEM, timeout=60_000)
    # the item on screen carries a render token this server session never issued (an old page's, made up)
    page.evaluate(
        """() => { const q = document.querySelector('[data-testid="annotate-queue"]').parentElement.__pjQueue;
        q.items[0].token = "0123456789abcdef0123456789abcdef"; }"""
    )
    page.keyboard.press("3")
    refusals = page.locator('[data-testid="annotate-refusals"]')
    refusals.get_by_text(
        re.compile(r"Item \d of queue-stale-p\d+: Not stored: this page did not show that item")
    ).wait_for(timeout=60_000)
    wait_for_js(page, ANSWERS_SAVED, timeout=60_000)
    screenshot(page, "queue-stale-token")
    assert _rows(store, "queue-stale") == []
    # the refused item comes back after the one on screen, with the token the server issued for it
    wait_for_js(page, QUEUE_SHOWS_ITEM, timeout=60_000)
    page.keyboard.press("0")
    page.keyboard.press("1")
    assert _wait_rows(store, "queue-stale", 2) == [(order[1], "label", 0), (order[0], "label", 1)]
