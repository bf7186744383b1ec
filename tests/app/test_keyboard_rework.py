"""Issue 20: the rework screen's first unanswered item takes the grade keys (0-3, or N/Y on the binary scale) and K
keeps the label (it used to list its items as mouse buttons only, under a sidebar that advertised 0-3).  Streamlit
binds each key to one button (``shortcut``), which the browser presses for it."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select
from streamlit.testing.v1 import AppTest

from core.types import CollectionSource, Passage, Query
from db.assignments import create_assignments
from db.importer import import_collection
from db.labelling import record_judgment
from db.models import Package
from db.package_qc import close_qc_round, start_qc_round
from db.pools import save_pool
from tests.app.test_qc_rework_page import PAGE, _ann_labels, _next, _open, returned  # noqa: F401 (fixture)

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test


def _keys(at) -> dict[str, str]:
    """Each button's shortcut, by label (buttons without one left out)."""
    return {b.label: b.proto.shortcut for b in at.button if b.proto.shortcut}


def test_the_first_unanswered_rework_item_takes_the_grade_keys(returned):
    store, ids, own, _package = returned
    at = _open(ids["ann"])
    assert not at.exception
    keys = {label: key for label, key in _keys(at).items() if "·" in label or label == "Keep my label"}
    assert keys == {
        "0 · No match": "0",
        "1 · On topic, does not meet the need": "1",
        "2 · Partly satisfies": "2",
        "3 · Precisely answers": "3",
        "Keep my label": "k",
    }
    assert any("Keys: 0-3 answer the first unanswered item" in c.value for c in at.caption)
    next(b for b in at.button if b.proto.shortcut == "2").click().run()  # what the key 2 presses
    assert _ann_labels(store, ids["ann"])[-1] == (own["d1"], 2, "")
    assert not any(b.proto.shortcut in ("0", "1", "2", "3", "k") for b in at.button)  # nothing left to answer


@pytest.fixture
def returned_with_new_items(returned):
    """``returned``, and ann has new items too (another pool's package): the Annotate queue has items to show."""
    store, ids, own, package = returned
    source = CollectionSource(
        passages=lambda: iter([Passage("e1", "Echo passage."), Passage("e2", "Foxtrot passage.")]),
        queries=lambda: iter([Query("q2", "which other passage")]),
        qrels=lambda: iter(()),
    )
    with store.write() as s:
        import_collection(s, source, name="c2", format="t", location="m")
        save_pool(s, "c2", "p2", {"q2": {"e1": [], "e2": []}}, method="depth")
        create_assignments(s, "c2", "p2", annotators=["ann"], per_pair=1, seed=1)
    return returned


def _sidebar_keys(at) -> list[str]:
    return [c.value for c in at.sidebar.caption if c.value.startswith("Keys:")]


@pytest.mark.parametrize("view", ["queue", "server"])
def test_the_rework_screen_owns_the_keys_while_a_disputed_item_is_unanswered(returned_with_new_items, view):
    """The queue's key handler took 0-3 before the rework buttons did: no item view while rework waits (issue 20)."""
    store, ids, own, _package = returned_with_new_items
    at = AppTest.from_file(PAGE, default_timeout=30)
    at.session_state["pooljudge_user_id"] = ids["ann"]
    at.session_state["annotate_item_view"] = view
    at.run()
    assert not at.exception
    assert "annotate_queue_issued" not in at.session_state  # the queue component was not drawn
    bound = sorted((b.proto.shortcut, str(b.key).split("-")[0]) for b in at.button if b.proto.shortcut)
    assert bound == [("0", "rework"), ("1", "rework"), ("2", "rework"), ("3", "rework"), ("k", "rework")]
    assert _sidebar_keys(at) == ["Keys: 0-3 answer the first unanswered disputed item · K keep your label"]
    assert any(i.value.startswith("New items follow once the disputed items above are answered") for i in at.info)
    next(b for b in at.button if b.proto.shortcut == "3").click().run()
    assert _ann_labels(store, ids["ann"])[-1] == (own["d1"], 3, "")
    # answered: the item view is back, with its own keys and the sidebar saying them
    assert _sidebar_keys(at) == ["Keys: 0-3 grade · S skip · U undo · P previous item · F flag"]
    if view == "queue":
        assert len(at.session_state["annotate_queue_issued"]) == 2
    else:
        assert {b.proto.shortcut for b in at.button if b.proto.shortcut} == {"0", "1", "2", "3", "p", "s", "u", "f"}


def test_an_earlier_item_lists_only_its_own_keys(returned):
    store, ids, own, _package = returned
    at = AppTest.from_file(PAGE, default_timeout=30)
    at.session_state["pooljudge_user_id"] = ids["ann"]
    next(b for b in at.run().button if b.label == "Keep my label").click().run()
    at.session_state["annotate_revisit"] = own["d2"]
    at.run()
    assert not at.exception
    assert _sidebar_keys(at) == ["Keys: 0-3 relabel · P previous item · B back to new items"]


def test_with_two_returned_packages_only_the_first_unanswered_item_takes_the_keys(returned):
    """Each package keyed its own first item: two buttons bound to the same key on one page."""
    store, ids, own, _package = returned
    source = CollectionSource(
        passages=lambda: iter([Passage(d, f"Passage {d}.") for d in ("e1", "e2")]),
        queries=lambda: iter([Query("q2", "which other passage")]),
        qrels=lambda: iter(()),
    )
    with store.write() as s:
        import_collection(s, source, name="c2", format="t", location="m")
        save_pool(s, "c2", "p2", {"q2": {"e1": [], "e2": []}}, method="depth")
        create_assignments(s, "c2", "p2", annotators=["ann"], per_pair=1, seed=1)
    while (item := _next(store, ids["ann"])) is not None:
        with store.write() as s:
            record_judgment(s, ids["ann"], item.assignment_id, 0)
    with store.write() as s:
        second = s.scalar(select(Package.id).where(Package.id != _package))
        round_id = start_qc_round(s, second, reviewers=["rev1", "rev2"], sample_size=2)
    for rev in ("rev1", "rev2"):
        while (item := _next(store, ids[rev])) is not None:
            with store.write() as s:
                record_judgment(s, ids[rev], item.assignment_id, 3)
    with store.write() as s:
        close_qc_round(s, round_id)
    at = _open(ids["ann"])
    assert not at.exception
    assert len([h for h in at.subheader if h.value.startswith("Rework")]) == 2
    # the keys rework-{assignment}-{grade}-{token} and rework-keep-{assignment}-{token}: the item each is drawn for
    bound = sorted((b.proto.shortcut, re.findall(r"-(\d+)-", str(b.key))[0]) for b in at.button if b.proto.shortcut)
    assert bound == [(k, str(own["d1"])) for k in ("0", "1", "2", "3", "k")]  # the first package's item only
    assert len([c for c in at.main.caption if c.value.startswith("Keys: 0-3 answer")]) == 1
