"""Admin page (issue 11): versions frozen and annotators added in the same session show at once; every QC round's
disagreement table stays on the page, computed from the store (AppTest on the seeded store of
test_review_admin_pages)."""

from __future__ import annotations

import pytest

from db.labelling import record_judgment
from tests.app.apptest import open_tab
from tests.app.test_review_admin_pages import (  # noqa: F401 (fixtures)
    ADMIN,
    NOTE,
    _open,
    _plain,
    _qc_reviews,
    db,
    template,
)

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test


def test_admin_lists_a_version_frozen_in_the_same_session(db):
    at = _open(db, ADMIN, "admin", "Qrels")
    assert "Existing versions: none" in [_plain(c.value) for c in at.caption]
    at.text_input(key="freeze_name").input("v-one")
    at.button(key="freeze_submit").click().run()
    assert [_plain(s.value) for s in at.success] == [  # the pairs a freeze leaves out, by reason (issue 20)
        "Froze 3 labels as v-one. Left out 3 judged pairs without a final label: 1 waiting for a 4th label, "
        "1 flagged, 1 waiting for more labels."
    ]
    assert "Existing versions: v-one" in [_plain(c.value) for c in at.caption]
    at.text_input(key="freeze_name").input("v-two")
    at.button(key="freeze_submit").click().run()
    at.run()  # and on every later run of the same session
    assert "Existing versions: v-one, v-two" in [_plain(c.value) for c in at.caption]


def test_admin_preselects_an_annotator_added_in_the_same_session(db):
    at = _open(db, ADMIN, "admin", "Assignments")
    assert at.multiselect(key="assign_annotators").value == ["ann1", "ann2", "ann3", "ann4"]
    at.selectbox(key="assign_pool").select("p2")
    at.multiselect(key="assign_annotators").unselect("ann2")  # the admin's own choice, submitted, is kept
    at.button(key="assign_submit").click().run()
    assert not at.exception and not at.error
    open_tab(at, "admin_tab", "Users")
    at.text_input(key="new_username").input("ann5")
    at.text_input(key="new_password").input("a long password")
    at.button(key="add_user").click().run()
    assert [_plain(s.value) for s in at.success] == ["Added ann5 (annotator)."]
    open_tab(at, "admin_tab", "Assignments")
    box = at.multiselect(key="assign_annotators")
    assert box.options == ["ann1", "ann2", "ann3", "ann4", "ann5"]
    assert box.value == ["ann1", "ann3", "ann4", "ann5"]
    at.run()  # a later run keeps the selection as it is
    assert at.multiselect(key="assign_annotators").value == ["ann1", "ann3", "ann4", "ann5"]


def _disagreement_tables(at):
    return [d.value for d in at.dataframe if "reviewers' notes" in d.value.columns]


def test_admin_keeps_each_rounds_disagreement_table(db):
    """A failing round's table (ids, query snippet, labels, notes) is on the page in every later session."""
    at = _open(db, ADMIN, "admin", "Quality control")
    at.number_input(key="qc_sample").set_value(6)
    at.button(key="qc_start").click().run()
    ann1 = {"d0": 3, "d1": 2, "d2": 0, "d3": 1, "d4": 2, "d5": 0}
    reviewers = dict(ann1, d1=0, d4=3)  # the reviewers disagree with ann1 on d1 and d4: 4/6 < 0.93
    for uid, aid, doc in _qc_reviews(db):
        note = NOTE if (uid, doc) == (db.ids["rev1"], "d1") else ""
        with db.write() as s:
            record_judgment(s, uid, aid, reviewers[doc], note=note)
    at.run()
    at.button(key="qc_close").click().run()
    assert not at.exception and not at.error
    assert _plain(at.success[0].value) == (
        "ann1-p001 round 1: accuracy 0.667 on 6 pairs, decision **revise** "
        "(2 disagreements, listed under Disagreements by round)."
    )
    fresh = _open(
        db, ADMIN, "admin", "Quality control"
    )  # a later session: computed from the store, not a one-time message
    [table] = _disagreement_tables(fresh)
    assert table.to_dict("records") == [
        {
            "query id": "q1",
            "query": "first <script>q</script>",
            "passage id": "d1",
            "annotator's label": 2,
            "reviewers' labels": "rev1: 0, rev2: 0",
            "consensus": "0",
            "reviewers' notes": f"rev1: {NOTE}",
        },
        {
            "query id": "q2",
            "query": "second query",
            "passage id": "d4",
            "annotator's label": 2,
            "reviewers' labels": "rev1: 3, rev2: 3",
            "consensus": "3",
            "reviewers' notes": "",
        },
    ]
    # a returned package is not offered for a new round until its annotator resubmits it
    assert "qc_package" not in [sb.key for sb in fresh.selectbox]
    assert "No finished package is waiting for review." in [_plain(c.value) for c in fresh.caption]
    [expander] = [e for e in fresh.expander if "round 1" in e.label]
    assert _plain(expander.label) == (
        "ann1-p001 (ann1) · round 1 · revise · accuracy 0.667 on 6 pairs · 2 disagreements"
    )
