"""Issue 20: the Review and Admin pages compute only the open tab (st.tabs with on_change="rerun"), and the
Pairs tab's filters survive a visit to another tab (AppTest on the seeded store of test_review_admin_pages)."""

from __future__ import annotations

from collections import Counter

import pytest

import db.review as review_reads
import db.rework as rework_reads
from tests.app.apptest import open_tab
from tests.app.test_review_admin_pages import (  # noqa: F401 (fixtures)
    ADMIN,
    REVIEW,
    _open,
    db,
    template,
)


@pytest.fixture
def calls(monkeypatch):
    """Counts the calls of the store reads behind each tab (the pages import them from these modules each run)."""
    counter: Counter[str] = Counter()

    def counted(module, name):
        real = getattr(module, name)

        def wrapper(*args, **kwargs):
            counter[name] += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    for name in ("review_table", "adjudication_queue", "throughput", "final_label_distribution", "package_overview"):
        counted(review_reads, name)
    counted(rework_reads, "qc_round_tables")
    return counter


def test_review_computes_only_the_open_tab(db, calls):
    at = _open(db, REVIEW, "rev1")
    assert not at.exception and [s.value for s in at.subheader][:1] == ["Per annotator"]
    assert calls == Counter()  # the Agreement tab reads standing labels only
    open_tab(at, "review_tab", "Pairs")
    assert calls == Counter(review_table=1)
    open_tab(at, "review_tab", "Adjudication")
    assert calls == Counter(review_table=1, adjudication_queue=1)
    open_tab(at, "review_tab", "Final labels")
    assert calls == Counter(review_table=1, adjudication_queue=1, final_label_distribution=1)
    open_tab(at, "review_tab", "Pairs")  # cached: no judgment since
    assert calls["review_table"] == 1


def test_the_pairs_filters_survive_a_visit_to_another_tab(db):
    at = _open(db, REVIEW, "rev1", "Pairs")
    at.selectbox(key="review_state").select("needs_fourth").run()
    [table] = [d.value for d in at.dataframe if d.key == "review_table"]
    assert list(table["passage id"]) == ["d2"]
    open_tab(at, "review_tab", "Throughput")
    assert "review_table" not in [d.key for d in at.dataframe]
    open_tab(at, "review_tab", "Pairs")
    assert at.selectbox(key="review_state").value == "needs_fourth"
    [table] = [d.value for d in at.dataframe if d.key == "review_table"]
    assert list(table["passage id"]) == ["d2"]


def test_admin_computes_only_the_open_tab(db, calls):
    at = _open(db, ADMIN, "admin")
    assert not at.exception and "username" in at.dataframe[0].value.columns
    assert calls == Counter()  # the Users tab: no package or QC table read
    open_tab(at, "admin_tab", "Quality control")
    assert calls == Counter(package_overview=1, qc_round_tables=1)
