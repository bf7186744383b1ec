"""The QC rework screen on the Annotate page under AppTest: texts verbatim, answers bound to their item, resubmit.

The browser test (test_qc_rework_browser.py) walks the whole loop in Chromium; these check quickly that a
press stores one judgment on the item it was drawn with and the item is then drawn with a fresh token
(the pressed render's buttons are gone), and the refusal of an early resubmission.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from sqlalchemy import select
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block

from core.types import CollectionSource, Passage, Query
from db.assignments import create_assignments
from db.importer import import_collection
from db.labelling import next_item, record_judgment
from db.models import Assignment, Judgment, Package, PassageRecord
from db.package_qc import close_qc_round, start_qc_round
from db.pools import save_pool
from db.users import add_user

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test

PAGE = str(Path(__file__).resolve().parents[2] / "views" / "annotate.py")
TEXTS = {"d1": "Alpha <script>x</script> passage.", "d2": "Bravo passage.", "d3": "Charlie passage."}
TRUTH = {"d1": 3, "d2": 0, "d3": 2}
GIVEN = {"d1": 0, "d2": 0, "d3": 2}  # one planted error: 2/3 < 0.93
NOTE = "<img src=x onerror=alert(1)> says nothing"


@pytest.fixture
def returned(db):
    """ann's package of three, returned by QC round 1 with d1 disputed (rev1 left a note on it)."""
    source = CollectionSource(
        passages=lambda: iter([Passage(d, t) for d, t in TEXTS.items()]),
        queries=lambda: iter([Query("q1", "which <b>passage</b>")]),
        qrels=lambda: iter(()),
    )
    with db.write() as s:
        import_collection(s, source, name="c", format="t", location="m")
        save_pool(s, "c", "p", {"q1": {d: [] for d in TEXTS}}, method="depth")
        ids = {
            n: add_user(s, n, "correct horse", r).id
            for n, r in (("ann", "annotator"), ("rev1", "reviewer"), ("rev2", "reviewer"))
        }
        create_assignments(s, "c", "p", annotators=["ann"], per_pair=1, seed=1)
        ext = dict(s.execute(select(PassageRecord.id, PassageRecord.ext_id)).all())
        own = {ext[p]: a for a, p in s.execute(select(Assignment.id, Assignment.passage_id))}
        package = s.scalar(select(Package.id))
    for doc, aid in own.items():
        with db.write() as s:
            record_judgment(s, ids["ann"], aid, GIVEN[doc])
    with db.write() as s:
        round_id = start_qc_round(s, package, reviewers=["rev1", "rev2"], sample_size=3)
    for rev in ("rev1", "rev2"):
        while (item := _next(db, ids[rev])) is not None:
            doc = next(d for d, t in TEXTS.items() if t == item.passage)
            with db.write() as s:
                record_judgment(
                    s, ids[rev], item.assignment_id, TRUTH[doc], note=NOTE if (rev, doc) == ("rev1", "d1") else ""
                )
    with db.write() as s:
        close_qc_round(s, round_id)
    return db, ids, own, package


def _next(store, uid):
    with store.read() as s:
        return next_item(s, uid)


def _open(uid: int) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=30)
    at.session_state["pooljudge_user_id"] = uid
    return at.run()


def _shown(at) -> list[str]:
    """What the browser shows of each st.html body: tags dropped, entities decoded."""
    return [html.unescape(re.sub(r"<[^>]*>", "", h.value)) for h in at.html]


def _plain(text: str) -> str:
    """Markdown text as shown (md_escape's backslashes dropped)."""
    return text.replace("\\", "")


def _ann_labels(store, uid):
    with store.read() as s:
        return s.execute(
            select(Judgment.assignment_id, Judgment.grade, Judgment.note)
            .where(Judgment.user_id == uid)
            .order_by(Judgment.id)
        ).all()


def test_the_rework_screen_shows_the_disputed_item_and_stores_one_answer_per_press(returned):
    store, ids, own, package = returned
    at = _open(ids["ann"])
    assert not at.exception
    assert _plain(at.subheader[0].value) == "Rework: package ann-p001"
    shown = _shown(at)
    assert "q1 · which <b>passage</b>" in shown and "d1 · Alpha <script>x</script> passage." in shown
    assert "Your label when reviewed · 0 · No match" in shown
    assert "Reviewers' labels · rev1: 3 · Precisely answers; rev2: 3 · Precisely answers" in shown
    assert f"Note from rev1 · {NOTE}" in shown
    assert not any("Bravo" in t or "Charlie" in t for t in shown)  # only the disputed item
    # the raw markup never reaches the page unescaped
    assert all("<script>" not in h.value and "<img" not in h.value for h in at.html)
    before = _ann_labels(store, ids["ann"])
    old = [b for b in at.button if b.label == "3 · Precisely answers"]
    assert len(old) == 1
    stale = old[0]
    stale.click().run()
    assert not at.exception
    after = _ann_labels(store, ids["ann"])
    assert after[len(before) :] == [(own["d1"], 3, "")]
    assert "Answered: your label now · 3 · Precisely answers" in _shown(at)
    # the button of the earlier render is gone: a fresh token was drawn for the item
    assert stale.key not in [b.key for b in at.button]
    at.button(key=f"rework-resubmit-{package}").click().run()
    assert _plain(at.success[0].value) == "Package ann-p001 resubmitted for quality control."
    with store.read() as s:
        assert s.get(Package, package).status == "submitted"
    assert not [s for s in at.subheader if _plain(s.value).startswith("Rework")]


def test_an_early_resubmission_is_refused_and_keep_my_label_counts_as_an_answer(returned):
    store, ids, own, package = returned
    at = _open(ids["ann"])
    at.button(key=f"rework-resubmit-{package}").click().run()
    assert [_plain(e.value) for e in at.error] == [
        "package ann-p001 was not resubmitted: 1 disputed item(s) not yet relabelled or confirmed (q1 / d1)"
    ]
    with store.read() as s:
        assert s.get(Package, package).status == "revise"
    next(b for b in at.button if b.label == "Keep my label").click().run()
    assert _ann_labels(store, ids["ann"])[-1] == (own["d1"], 0, "kept after QC round 1")
    at.button(key=f"rework-resubmit-{package}").click().run()
    with store.read() as s:
        assert s.get(Package, package).status == "submitted"


def test_a_kept_label_carries_the_annotators_note_for_the_next_reviewer(returned):
    store, ids, own, package = returned
    at = _open(ids["ann"])
    at.text_input(key=f"rework-note-{own['d1']}").input("the <b>passage</b> names the city")
    next(b for b in at.button if b.label == "Keep my label").click().run()
    assert not at.exception
    assert _ann_labels(store, ids["ann"])[-1] == (own["d1"], 0, "the <b>passage</b> names the city")


def _layout(at) -> dict[str, tuple[tuple[int, ...], tuple[int, ...]]]:
    """Where each rework item's box sits in the page's tree, and where its row of buttons sits in the box."""
    found: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {}

    def walk(node, path: tuple[int, ...]) -> None:
        for index, child in getattr(node, "children", {}).items():
            here = (*path, index)
            key = getattr(getattr(child, "proto", None), "id", "") or ""
            if "-rework-item-" in key:
                rows = tuple(
                    i
                    for i, c in child.children.items()
                    if isinstance(c, Block)
                    and c.proto.HasField("flex_container")
                    and c.proto.flex_container.direction == c.proto.flex_container.HORIZONTAL
                )
                found[key.split("-rework-item-")[1]] = (here, rows)
            walk(child, here)

    walk(at.main, ())
    return found


def test_an_item_box_stays_where_it_was_drawn_whatever_the_run_shows_around_it(returned):
    # A run redraws the page element by element; until an element arrives, the browser keeps what the earlier
    # run drew at its place, and a block keeps its earlier children. A box that moved (a message above it came
    # or went) therefore showed another item's texts inside it while the run lasted (seen in CI: two "Answered"
    # lines in one item's box). So every box is drawn at the same place in each run, its buttons too.
    store, ids, own, package = returned
    at = _open(ids["ann"])
    drawn = _layout(at)
    assert list(drawn) == [str(own["d1"])] and len(drawn[str(own["d1"])][1]) == 1
    at.button(key=f"rework-resubmit-{package}").click().run()  # refused: a message above the items
    assert at.error and _layout(at) == drawn
    at.run()  # the message is gone
    assert not at.error and _layout(at) == drawn
    next(b for b in at.button if b.label == "3 · Precisely answers").click().run()  # answered: keys and note go
    assert "Answered: your label now · 3 · Precisely answers" in _shown(at)
    assert _layout(at) == drawn
    assert "Every disputed item is answered: resubmit the package for the next round of quality control." in [
        c.value for c in at.caption
    ]
