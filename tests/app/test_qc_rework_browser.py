"""Acceptance (issue 11): the QC rework loop end to end in the browser.

A package with planted errors fails QC (the admin closes the round on the Admin page), its annotator sees the
disputed items with the reviewers' labels and notes, relabels them, resubmits (a resubmission before that is
refused), and the next round passes.  Setup that is not the point (collection, pool, assignment, the first
labels, the reviewers' labels) goes through the library.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from db.assignments import create_assignments
from db.engine import Store, sqlite_url
from db.labelling import next_item, record_judgment
from db.models import Assignment, Package, PassageRecord, QcRound
from db.package_qc import start_qc_round
from tests.app.browser_helpers import (
    add_accounts,
    import_pooled,
    screenshot,
    serve_sqlite,
    sign_in,
    wait_idle,
)

pytestmark = pytest.mark.browser

QUERY = "how tall is the <b>Eiffel</b> tower"
PASSAGES = {
    "d0": "The Eiffel Tower is 330 metres tall.",
    "d1": "Paris lies on the Seine <i>river</i>.",
    "d2": "The tower's height changed with its antennas.",
    "d3": "Croissants are best eaten warm.",
    "d4": "At 330 m the Eiffel Tower was the tallest structure until 1930.",
}
TRUTH = {"d0": 3, "d1": 0, "d2": 2, "d3": 0, "d4": 3}
PLANTED = {"d1": 2, "d3": 1}  # ann1's errors: 3 of 5 right, 0.6 < 0.93
NOTE = "Only <b>Paris</b> is named, not the tower's height."


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    # a server of its own: the Admin page's QC form offers every finished package of the store by default
    folder = tmp_path_factory.mktemp("qc_rework")
    db = folder / "pooljudge.db"
    store = Store(sqlite_url(db))
    with store.write() as s:
        import_pooled(s, {d: ("q1", t) for d, t in PASSAGES.items()}, {"q1": QUERY})
        ids = add_accounts(s, {"admin": "admin", "rev1": "reviewer", "rev2": "reviewer", "ann1": "annotator"})
        create_assignments(s, "tower", "p", annotators=["ann1"], per_pair=1, seed=3, package_size=5)
    with serve_sqlite(db, folder / "streamlit.log") as url:
        yield {"url": url, "store": store, "ids": ids}
    store.dispose()


def _setup_failing_round(store, ids) -> tuple[int, dict[str, int]]:
    """ann1 labels the package with two planted errors; round 1 samples all five; both reviewers label the truth."""
    with store.read() as s:
        ext = dict(s.execute(select(PassageRecord.id, PassageRecord.ext_id)).all())
        own = {
            ext[p]: a
            for a, p in s.execute(select(Assignment.id, Assignment.passage_id).where(Assignment.user_id == ids["ann1"]))
        }
        package = s.scalar(select(Package.id).where(Package.user_id == ids["ann1"]))
    for doc, aid in own.items():
        with store.write() as s:
            record_judgment(s, ids["ann1"], aid, PLANTED.get(doc, TRUTH[doc]))
    with store.write() as s:
        start_qc_round(s, package, reviewers=["rev1", "rev2"], sample_size=5, seed=0)
    for rev in ("rev1", "rev2"):
        while True:
            with store.read() as s:
                item = next_item(s, ids[rev])
            if item is None:
                break
            doc = next(d for d, t in PASSAGES.items() if t == item.passage)
            with store.write() as s:
                record_judgment(
                    s, ids[rev], item.assignment_id, TRUTH[doc], note=NOTE if (rev, doc) == ("rev1", "d1") else ""
                )
    return package, own


def _close_round(admin, decision: str) -> None:
    """On the Admin page's Quality control tab, close the open round; wait for its ``decision`` line."""
    admin.get_by_role("tab", name="Quality control").click()
    admin.get_by_role("button", name="Close round and decide").click()
    admin.get_by_text(decision, exact=False).wait_for(timeout=60_000)


def _rework_screen(ann, own: dict[str, int]) -> str:
    """Wait until the annotator's rework screen is drawn whole; the main area's text."""
    ann.get_by_text("Rework: package ann1-p001").wait_for(timeout=60_000)
    # the whole run is drawn: the progress line, both items' last buttons and the panel below them
    ann.get_by_text("0 of 2 disputed items answered").wait_for(timeout=60_000)
    for doc in PLANTED:
        item = ann.locator(f".st-key-rework-item-{own[doc]}")
        item.get_by_role("button", name="Keep my label").wait_for(timeout=60_000)
    # the rework owns the keys: the panel below shows no item view of its own until every item is answered
    ann.get_by_text("New items follow once the disputed items above are answered").wait_for(timeout=60_000)
    wait_idle(ann, 60_000, fresh=True)
    return ann.locator('[data-testid="stMain"]').inner_text()


def _check_disputed_items(ann, own: dict[str, int], text: str) -> None:
    """Exactly the two disputed items, texts verbatim, with the reviewers' labels and note."""
    assert "Quality control round 1 returned this package: accuracy 60%, below the 93% needed." in text
    assert "The reviewers disagreed with 2 of your labels" in text
    assert "0 of 2 disputed items answered" in text
    expect(ann.locator('[class*="st-key-rework-item-"]')).to_have_count(2, timeout=30_000)
    d1 = ann.locator(f".st-key-rework-item-{own['d1']}").inner_text()
    assert QUERY in d1 and PASSAGES["d1"] in d1  # markup in the texts is shown as text
    assert re.search(r"Your label when reviewed\s*·\s*2 · ", d1), d1
    assert re.search(r"Reviewers' labels\s*·\s*rev1: 0 · [^;]+; rev2: 0 · ", d1), d1
    assert re.search(r"Note from rev1\s*·\s*" + re.escape(NOTE), d1), d1
    d3 = ann.locator(f".st-key-rework-item-{own['d3']}").inner_text()
    assert PASSAGES["d3"] in d3 and re.search(r"Your label when reviewed\s*·\s*1 · ", d3), d3
    assert re.search(r"Reviewers' labels\s*·\s*rev1: 0 · [^;]+; rev2: 0 · ", d3) and "Note from" not in d3, d3
    for doc in ("d0", "d2", "d4"):
        assert PASSAGES[doc] not in text
    expect(ann.locator("main b", has_text="Paris")).to_have_count(0, timeout=30_000)
    expect(ann.locator("main i", has_text="river")).to_have_count(0, timeout=30_000)


# words of one disputed passage only: no other item's box may ever show them, not even during a run
OWN_WORDS = {"d1": "Seine", "d3": "Croissants"}


def _watch_boxes(ann, own: dict[str, int]) -> None:
    """From now on, record on the page each time an item's box shows another item's words (checked on every
    change of the page, so also while a run is drawing: a box that moved between runs showed the remains of
    the box drawn before at its new place, seen in CI as two "Answered" lines in one box)."""
    boxes = [
        [f"st-key-rework-item-{own[doc]}", [w for other, w in OWN_WORDS.items() if other != doc]] for doc in OWN_WORDS
    ]
    ann.evaluate(
        """(boxes) => {
            window.__mixedBoxes = [];
            const check = () => {
                for (const [name, foreign] of boxes) {
                    for (const box of document.getElementsByClassName(name)) {
                        for (const word of foreign) {
                            const seen = `${name} showed ${word}`;
                            if (box.textContent.includes(word) && !window.__mixedBoxes.includes(seen)) {
                                window.__mixedBoxes.push(seen);
                            }
                        }
                    }
                }
            };
            new MutationObserver(check).observe(document.body, {subtree: true, childList: true, characterData: true});
        }""",
        boxes,
    )


def _relabel_and_resubmit(ann, own: dict[str, int]) -> None:
    """Relabel both disputed items with the truth (each press lands on its own item), then resubmit."""
    for doc in ("d1", "d3"):
        wait_idle(ann, 60_000, fresh=True)
        box = ann.locator(f".st-key-rework-item-{own[doc]}")
        box.get_by_role("button", name=re.compile(rf"^{TRUTH[doc]} · ")).click()
        box.get_by_text("Answered: your label now").wait_for(timeout=60_000)
    ann.get_by_text("2 of 2 disputed items answered").wait_for(timeout=60_000)
    wait_idle(ann, 60_000, fresh=True)
    ann.get_by_role("button", name="Resubmit package ann1-p001").click()
    ann.get_by_text("Package ann1-p001 resubmitted for quality control.").wait_for(timeout=60_000)


def _package_status(store, package: int) -> str:
    with store.read() as s:
        return s.get(Package, package).status


def test_a_returned_package_is_reworked_and_passes_the_next_round(server, new_page):
    store, ids = server["store"], server["ids"]
    package, own = _setup_failing_round(store, ids)

    # the admin closes round 1: below the threshold, back to the annotator, the round's table stays listed
    admin = new_page()
    # straight to the Admin page: the Home page never runs
    sign_in(admin, server["url"], server["store"], "admin", path="/admin")
    admin.get_by_role("heading", name="Admin").first.wait_for(timeout=60_000)
    _close_round(admin, "accuracy 0.600 on 5 pairs, decision revise")
    admin.get_by_text(
        re.compile(r"ann1-p001 \(ann1\) · round 1 · revise · accuracy 0\.600 on 5 pairs · 2 disagreements")
    ).wait_for(timeout=30_000)

    # the annotator sees exactly the two disputed items
    ann = new_page()
    sign_in(ann, server["url"], server["store"], "ann1")
    _check_disputed_items(ann, own, _rework_screen(ann, own))
    screenshot(ann, "qc_rework")
    _watch_boxes(ann, own)

    # resubmitting with nothing answered is refused, with the pairs named
    ann.get_by_role("button", name="Resubmit package ann1-p001").click()
    refused = "2 disputed item(s) not yet relabelled or confirmed (q1 / d1, q1 / d3)"
    ann.get_by_text(refused, exact=False).wait_for(timeout=60_000)
    assert _package_status(store, package) == "revise"

    _relabel_and_resubmit(ann, own)
    assert ann.evaluate("window.__mixedBoxes") == []
    expect(ann.get_by_text("Rework: package ann1-p001")).to_have_count(0, timeout=30_000)
    assert _package_status(store, package) == "submitted"

    # round 1 reviewed all five items and both disputed labels now follow the reviewers: round 2 has nothing
    # left to review (no item is reviewed twice, issue 20) and passes the package at once, saying so
    # another tab and back: the Quality control tab is drawn again from the store (only the open tab runs)
    admin.get_by_role("tab", name="Users").click()
    admin.get_by_role("button", name="Add user").wait_for(timeout=60_000)  # the Users tab ran
    admin.get_by_role("tab", name="Quality control").click()
    admin.get_by_role("button", name="Start QC round").wait_for(timeout=60_000)
    wait_idle(admin, 60_000, fresh=True)
    admin.get_by_role("button", name="Start QC round").click()
    admin.get_by_text("ann1-p001 round 2: every item was reviewed in an earlier round", exact=False).wait_for(
        timeout=60_000
    )
    with store.read() as s:
        rounds = s.scalars(select(QcRound).where(QcRound.package_id == package).order_by(QcRound.round_no)).all()
        assert [(r.round_no, r.status, r.accuracy, r.n_checked) for r in rounds] == [
            (1, "revise", 0.6, 5),
            (2, "passed", None, 0),
        ]
        assert rounds[1].seed != rounds[0].seed
    assert _package_status(store, package) == "passed"
