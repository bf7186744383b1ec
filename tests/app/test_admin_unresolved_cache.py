"""Admin › Qrels computes the pairs a freeze leaves out once per state of the labels, not on every run (AppTest).

The panel's counts come from every judgment of the collection (0.26-0.8 s on a 20,000-pair store): they are
kept until a judgment, an override or a final label changes (:func:`db.markers.qrels_marker`).
"""

from __future__ import annotations

import threading

import pytest

import db.unresolved as unresolved
import pooljudge.ui.qc_states as qc_states
from db.labelling import record_judgment
from tests.app.apptest import VIEWS, open_tab, private_store
from tests.db.unresolved_helpers import _assignment, unresolved_template

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    return unresolved_template(tmp_path_factory.mktemp("unresolved-cache"))


@pytest.fixture
def db(seeded, tmp_path, monkeypatch):
    template, ids = seeded
    with private_store(template, ids, tmp_path, monkeypatch) as store:
        yield store


def _warning(at) -> str:
    [warning] = [w.value.replace("\u2060", "").replace("\\", "") for w in at.warning]
    return warning.split(":")[0]


def test_the_left_out_pairs_are_computed_again_only_when_a_label_changes(db, monkeypatch):
    from streamlit.testing.v1 import AppTest

    calls: list[str] = []
    counted = unresolved.unresolved_pairs

    def unresolved_pairs(session, collection, *args, **kwargs):
        calls.append(collection)
        return counted(session, collection, *args, **kwargs)

    for module in (qc_states, unresolved):  # the page's own reference and the background worker's
        monkeypatch.setattr(module, "unresolved_pairs", unresolved_pairs)
    at = AppTest.from_file(str(VIEWS / "admin.py"), default_timeout=60)
    at.session_state["pooljudge_user_id"] = db.ids["admin"]
    at.run()
    at = open_tab(at, "admin_tab", "Qrels")
    assert not at.exception
    assert _warning(at) == "4 judged pairs have no final label and a freeze leaves them out"
    assert calls == ["c"]
    at.run()
    at.run()
    assert _warning(at) == "4 judged pairs have no final label and a freeze leaves them out"
    assert calls == ["c"]  # nothing changed: the counts of the first run
    ann1 = db.ids["ann1"]
    with db.write() as s:
        record_judgment(s, ann1, _assignment(s, ann1, "d5"), 2)
    at.run()
    assert _warning(at) == "5 judged pairs have no final label and a freeze leaves them out"
    assert [m.value for m in at.metric] == ["1"]
    assert calls == ["c", "c"]


def test_the_left_out_pairs_are_computed_off_the_request(db, monkeypatch):
    """Every label changes the qrels marker: under labelling the computation must not hold up the tab's run."""
    from streamlit.testing.v1 import AppTest

    threads: list[str] = []
    counted = unresolved.unresolved_pairs

    def unresolved_pairs(session, collection, *args, **kwargs):
        threads.append(threading.current_thread().name)
        return counted(session, collection, *args, **kwargs)

    for module in (qc_states, unresolved):
        monkeypatch.setattr(module, "unresolved_pairs", unresolved_pairs)
    at = AppTest.from_file(str(VIEWS / "admin.py"), default_timeout=60)
    at.session_state["pooljudge_user_id"] = db.ids["admin"]
    at.run()
    at = open_tab(at, "admin_tab", "Qrels")
    assert not at.exception
    assert _warning(at) == "4 judged pairs have no final label and a freeze leaves them out"
    assert [m.value for m in at.metric] == ["1"]
    assert len(threads) == 1 and threads[0].startswith("pooljudge-background"), threads


def test_the_left_out_list_is_sent_only_when_opened(db):
    """The list of left-out pairs (hundreds on a large store) is drawn only in an open expander."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(VIEWS / "admin.py"), default_timeout=60)
    at.session_state["pooljudge_user_id"] = db.ids["admin"]
    at.run()
    at = open_tab(at, "admin_tab", "Qrels")
    assert [e.label for e in at.expander] == ["List the pairs without a final label"]
    assert [list(d.value.columns) for d in at.dataframe] == []  # the tab's only table is the list
    at.session_state["unresolved_list"] = True  # the expander opened
    at.run()
    [listing] = [d.value for d in at.dataframe]
    assert sorted(listing["doc id"]) == ["d1", "d2", "d3", "d4"]
    ann1 = db.ids["ann1"]
    with db.write() as s:
        record_judgment(s, ann1, _assignment(s, ann1, "d5"), 2)
    at.run()  # one more pair left out: the open list stays open and shows it
    [listing] = [d.value for d in at.dataframe]
    assert sorted(listing["doc id"]) == ["d1", "d2", "d3", "d4", "d5"]
