"""Admin › Qrels says which judged pairs a freeze leaves out, by reason; Admin › Quality control says which
package waits for a flag (issue 20, acceptance 4; AppTest)."""

from __future__ import annotations

import pytest

from db.labelling import record_judgment
from tests.app.apptest import VIEWS, open_tab, private_store
from tests.db.unresolved_helpers import _assignment, unresolved_template

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    return unresolved_template(tmp_path_factory.mktemp("honest"))


@pytest.fixture
def db(seeded, tmp_path, monkeypatch):
    template, ids = seeded
    with private_store(template, ids, tmp_path, monkeypatch) as store:
        store.admin_id = ids["admin"]
        yield store


def _admin(db, tab):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(VIEWS / "admin.py"), default_timeout=60)
    at.session_state["pooljudge_user_id"] = db.ids["admin"]
    at.run()
    return open_tab(at, "admin_tab", tab)


def _plain(text: str) -> str:
    return text.replace("\u2060", "").replace("\\", "")


def test_freezing_on_the_page_counts_the_pairs_left_out_by_reason(db):
    at = _admin(db, "Qrels")
    assert not at.exception
    assert [m.value for m in at.metric] == ["1"]
    [warning] = [_plain(w.value) for w in at.warning]
    assert warning.startswith(
        "4 judged pairs have no final label and a freeze leaves them out: 1 waiting for a 4th label, "
        "1 excluded after a 4th differing label, 1 flagged, 1 waiting for more labels."
    )
    assert not [d for d in at.dataframe if "detail" in d.value.columns]  # the list is sent once opened
    at.session_state["unresolved_list"] = True  # the expander opened
    at.run()
    [listed] = [d.value for d in at.dataframe if "detail" in d.value.columns]
    assert list(listed["doc id"]) == ["d1", "d2", "d3", "d4"]
    assert list(listed["detail"])[1] == "4 labels, no majority: 0, 1, 2, 3"
    at.text_input(key="freeze_name").input("v1")
    at.button(key="freeze_submit").click().run()
    assert not at.exception and not at.error
    assert [_plain(s.value) for s in at.success] == [
        "Froze 1 labels as v1. Left out 4 judged pairs without a final label: 1 waiting for a 4th label, "
        "1 excluded after a 4th differing label, 1 flagged, 1 waiting for more labels."
    ]


def test_a_package_held_by_a_flag_says_so_and_links_to_the_flags(db):
    at = _admin(db, "Quality control")
    assert not at.exception
    assert any(
        _plain(c.value).startswith("A round samples only items no earlier round of the package sampled")
        for c in at.caption
    )
    # ann1's package (all ten pairs) has d5-d9 unlabelled besides the flagged d3: nothing to say yet
    assert [_plain(w.value) for w in at.warning] == []
    ann1 = db.ids["ann1"]
    for doc in ("d5", "d6", "d7", "d8", "d9"):
        with db.write() as s:
            record_judgment(s, ann1, _assignment(s, ann1, doc), 2)
    at.run()
    assert [_plain(w.value) for w in at.warning] == [
        "Package ann1-p001 (ann1, 9/10 labelled) waits for 1 flagged item to be resolved (q1 / d3): a reviewer "
        "answers the flag under Review › Throughput › Flagged items, then ann1 labels it from 'My earlier items'; "
        "the package can start QC after that."
    ]
    assert "[Open the flagged items (Review › Throughput › Flagged items)](review)" in [m.value for m in at.markdown]
    # the package is not offered for QC, and the warning is why
    assert "ann1-p001" not in str([o for sb in at.selectbox for o in sb.options])


def test_a_link_to_an_archived_collection_says_so(db):
    from core.types import CollectionSource, Passage, Query
    from db.archive import archive
    from db.importer import import_collection

    source = CollectionSource(
        passages=lambda: iter([Passage("x1", "text")]), queries=lambda: iter([Query("y1", "q")]), qrels=lambda: iter(())
    )
    with db.write() as s:
        import_collection(s, source, name="other", format="t", location="m")
        archive(s, "collection", "c", by="admin")
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(VIEWS / "admin.py"), default_timeout=60)
    at.session_state["pooljudge_user_id"] = db.ids["admin"]
    at.query_params["collection"] = "c"
    at.session_state["admin_tab"] = "Qrels"
    at.run()
    assert not at.exception
    [info] = [_plain(i.value) for i in at.info]
    assert info.startswith("Collection 'c' (from the link) is archived (by admin at ")
    assert info.endswith(
        "UTC): this page shows 'other'. Restore it on the Manage page to work on it here; `pooljudge eval -c` "
        "and `export -c` still read it by name."
    )


def test_the_download_page_says_which_judged_pairs_a_version_leaves_out(db):
    from streamlit.testing.v1 import AppTest

    from db.resolution import freeze_qrels

    with db.write() as s:
        freeze_qrels(s, "c", "v1")
    at = AppTest.from_file(str(VIEWS / "runs.py"), default_timeout=60)
    at.session_state["pooljudge_user_id"] = db.ids["admin"]
    at.run()
    assert not at.exception
    assert [_plain(w.value) for w in at.warning] == [
        "This version holds resolved pairs only: 4 judged pairs of the collection are not in it (1 waiting for a "
        "4th label, 1 excluded after a 4th differing label, 1 flagged, 1 waiting for more labels). `pooljudge "
        "export qrels --list-unresolved` lists them; `--unresolved-median PATH` writes their median labels to a "
        "separate file."
    ]
