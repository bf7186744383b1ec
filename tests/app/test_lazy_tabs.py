"""Issue 20: the Review and Admin pages compute only the open tab (st.tabs with on_change="rerun"), and the
Pairs tab's filters survive a visit to another tab (AppTest on the seeded store of test_review_admin_pages)."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest

import db.review as review_reads
import db.review_progress as progress_reads
import db.rework as rework_reads
from tests.app.apptest import judge, open_tab
from tests.app.test_review_admin_pages import (  # noqa: F401 (fixtures)
    ADMIN,
    REVIEW,
    _open,
    db,
    template,
)

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test


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

    for name in ("review_table", "adjudication_queue"):
        counted(review_reads, name)
    for name in ("throughput", "final_label_distribution", "package_overview"):
        counted(progress_reads, name)
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


def _wait_for(at, condition, what: str, timeout: float = 60.0):
    """Rerun the page until ``condition(at)`` holds (the background thread finishes on its own time)."""
    deadline = time.monotonic() + timeout
    while not condition(at.run()):
        assert time.monotonic() < deadline, f"{what} not shown after {timeout:.0f} s"
        time.sleep(0.2)
    return at


def _labels_of(at, doc):
    tables = [d.value for d in at.dataframe if d.key == "review_table"]
    if not tables:
        return None
    return dict(zip(tables[0]["passage id"], tables[0]["labels"])).get(doc)


def test_a_slow_table_is_computed_in_the_background_and_the_last_one_shown(db, monkeypatch):
    """The request never waits for a slow table: the first time a notice, later the last table while the new
    one is computed; each label (a new judgment marker) starts one computation."""
    monkeypatch.setenv("POOLJUDGE_BACKGROUND_WAIT", "0.2")
    gate = threading.Event()
    real = review_reads.review_table
    computed: list[int] = []

    def slow(*args, **kwargs):
        assert gate.wait(60)
        computed.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(review_reads, "review_table", slow)
    at = _open(db, REVIEW, "rev1", "Pairs")
    assert not at.exception, at.exception
    assert [i.value for i in at.info] == [
        "Computing the pairs table in the background: this page shows it as soon as it is ready."
    ]
    assert "review_table" not in [d.key for d in at.dataframe] and computed == []
    gate.set()
    _wait_for(at, lambda a: _labels_of(a, "d4") is not None, "the pairs table")
    assert _labels_of(at, "d4") == "ann1: 2, ann2: 1" and computed == [1]

    gate.clear()
    judge(db, db.ids["ann3"], "q2", "d4", 2)
    at.run()  # the new table waits on the gate: the last one is shown, said to be updating
    assert _labels_of(at, "d4") == "ann1: 2, ann2: 1"
    assert any(c.value.startswith("Computed at ") and "being counted" in c.value for c in at.caption)
    gate.set()
    _wait_for(at, lambda a: _labels_of(a, "d4") == "ann1: 2, ann2: 1, ann3: 2", "the newer pairs table")
    assert computed == [1, 1]


def test_the_agreement_tab_computes_no_statistic_on_the_request(db, monkeypatch):
    """The report, confusion matrices included, comes from the background thread: the page's run only draws."""
    import core.agreement.report as report
    import core.agreement.statistics as statistics

    real = statistics.collect_table
    threads: list[str] = []

    def noted(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    for module in (statistics, report):  # the report's own reference and the one confusion_matrix calls
        monkeypatch.setattr(module, "collect_table", noted)
    at = _wait_for(
        _open(db, REVIEW, "rev1"),
        lambda a: any("pj-confusion" in h.proto.body for h in a.get("html")),
        "confusion matrix",
    )
    pair = at.selectbox(key="confusion_pair").value
    assert (pair["a"], pair["b"]) == ("ann1", "ann2") and sum(map(sum, pair["confusion"])) == pair["n_items"] > 0
    assert threads and all(name.startswith("pooljudge-background") for name in threads), threads


def test_the_first_time_refresher_is_one_fragment_above_the_tabs(db, monkeypatch):
    """While a tab's first table is computed a refresher reruns the page each second.  Drawn inside the tab it
    was a new fragment per tab: closing the tab dropped it on the server while the browser kept asking for it
    every second, and the refresher of the tab opened next never ran.  It is drawn above the tabs, at the same
    place (the same fragment) whichever tab waits."""
    from streamlit.delta_generator_singletons import context_dg_stack

    import pooljudge.ui.background as background_module

    monkeypatch.setenv("POOLJUDGE_BACKGROUND_WAIT", "0.05")
    gate = threading.Event()
    for name in ("review_table", "standing_labels"):
        real = getattr(review_reads, name)
        monkeypatch.setattr(review_reads, name, lambda *a, _real=real, **k: (gate.wait(60), _real(*a, **k))[1])
    places: list[str] = []
    monkeypatch.setattr(
        background_module, "_refresher", lambda slot: places.append(context_dg_stack.get()[-1]._get_delta_path_str())
    )
    try:
        at = _open(db, REVIEW, "rev1")  # the Agreement tab waits for its report
        assert [i.value for i in at.info] == [
            "Computing the agreement in the background: this page shows it as soon as it is ready."
        ]
        open_tab(at, "review_tab", "Pairs")
        assert [i.value for i in at.info][-1].startswith("Computing the pairs table in the background")
    finally:
        gate.set()
    assert len(places) == 2 and places[0] == places[1], places


def test_the_ranked_list_reads_a_pool_s_queries_once(db, monkeypatch):
    """Grouping every entry of the pool was a third of each Ranked list run; a saved pool never changes."""
    import db.ranked_lists as ranked_reads

    real = ranked_reads.pool_queries
    reads: list[str] = []

    def counted(session, collection, pool):
        reads.append(pool)
        return real(session, collection, pool)

    monkeypatch.setattr(ranked_reads, "pool_queries", counted)
    at = _open(db, REVIEW, "rev1", "Ranked list")
    assert not at.exception and at.selectbox(key="ranked_query").options  # the pool's queries are offered
    open_tab(at, "review_tab", "Pairs")
    open_tab(at, "review_tab", "Ranked list")
    at.run()
    assert len(reads) == 1, reads


def test_another_tab_reads_the_ranked_list_s_queries_ahead_once(db, monkeypatch):
    """The Ranked list tab's first visit read the pool's queries and ran its statements for the first time (300-400
    ms of the switch on a busy machine); the Review page reads them ahead, in a thread, after drawing another tab,
    once per pool and process, and the tab then reads nothing of them again."""
    import db.ranked_lists as ranked_reads
    import pooljudge.ui.ranked_component as ranked_component

    real = ranked_reads.pool_queries
    reads: list[str] = []

    def counted(session, collection, pool):
        reads.append(pool)
        return real(session, collection, pool)

    class InProcesses:  # the app's background worker (the app tests' is a thread, and reads nothing ahead)
        in_processes = True

    monkeypatch.setattr(ranked_reads, "pool_queries", counted)
    monkeypatch.setattr(ranked_component, "background", lambda: InProcesses())
    monkeypatch.setattr(ranked_component, "_prefetched", set())
    ranked_component.queries_of_pool.clear()
    at = _open(db, REVIEW, "rev1", "Pairs")
    assert not at.exception
    for thread in [t for t in threading.enumerate() if t.name == "pooljudge-ranked-prefetch"]:
        thread.join(timeout=60)
    assert len(reads) == 1  # read ahead
    open_tab(at, "review_tab", "Adjudication")  # another tab: not read again
    open_tab(at, "review_tab", "Ranked list")
    assert not at.exception and at.selectbox(key="ranked_query").options
    assert reads == [at.selectbox(key="ranked_pool").value]  # the pool the tab shows first; it found them read


def test_a_tab_still_waiting_for_its_table_reads_the_ranked_list_ahead_too(db, monkeypatch):
    """The Review page's first run under load shows "Computing ..." for Pairs and stops; the read ahead came after
    the tab's drawing and never ran then (the first Ranked list switch read the queries and built the highlighter's
    patterns itself: 0.39-0.49 s of server time, measured with a statistics job running)."""
    import db.ranked_lists as ranked_reads
    import pooljudge.dashboard_tables as dashboard_tables
    import pooljudge.ui.ranked_component as ranked_component

    real = ranked_reads.pool_queries
    reads: list[str] = []
    released = threading.Event()
    real_table = dashboard_tables.review_table

    def slow_table(*args, **kwargs):  # the pairs table is still being computed when the page draws the tab
        released.wait(60)
        return real_table(*args, **kwargs)

    class InProcesses:
        in_processes = True

    monkeypatch.setattr(ranked_reads, "pool_queries", lambda s, c, p: reads.append(p) or real(s, c, p))
    monkeypatch.setattr(ranked_component, "background", lambda: InProcesses())
    monkeypatch.setattr(ranked_component, "_prefetched", set())
    monkeypatch.setattr(dashboard_tables, "review_table", slow_table)
    monkeypatch.setenv("POOLJUDGE_BACKGROUND_WAIT", "0")
    ranked_component.queries_of_pool.clear()
    try:
        at = _open(db, REVIEW, "rev1", "Pairs")
        assert not at.exception
        assert any("Computing" in i.value for i in at.info)  # the tab stopped at its notice
        for thread in [t for t in threading.enumerate() if t.name == "pooljudge-ranked-prefetch"]:
            thread.join(timeout=60)
        assert len(reads) == 1  # read ahead all the same
    finally:
        released.set()
