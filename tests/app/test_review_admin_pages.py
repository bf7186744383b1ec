"""The Review and Admin pages rendered with streamlit's AppTest against a small seeded store."""

from __future__ import annotations

import html
import math
import re
from pathlib import Path

import pytest
from sqlalchemy import func, select
from streamlit.testing.v1 import AppTest

from core.agreement import agreement_report, confusion_matrix, from_label_map
from core.passwords import verify_password
from core.types import CollectionSource, Passage, Query
from db.adjudication import set_pool_adjudicators
from db.assignments import create_assignments
from db.engine import Store, sqlite_url
from db.importer import import_collection
from db.labelling import record_judgment
from db.models import Assignment, FinalLabel, Package, PassageRecord, QcRound, QrelsVersion, User
from db.pools import save_pool
from db.review import standing_labels
from db.review_progress import final_label_distribution, package_overview
from db.users import add_user
from tests.app.apptest import judge, open_as, open_tab, pair_ids, private_store
from tests.app.test_confusion_table import matrix_of
from tests.sqlite_template import fresh_sqlite

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test

VIEWS = Path(__file__).resolve().parents[2] / "views"
REVIEW = str(VIEWS / "review.py")
ADMIN = str(VIEWS / "admin.py")
DOCS = [f"d{i}" for i in range(8)]
QUERY_OF = {"d0": "q1", "d1": "q1", "d2": "q1", "d6": "q1", "d3": "q2", "d4": "q2", "d5": "q2", "d7": "q2"}
NOTE = "<img src=x onerror=alert(1)> *look*"


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """The seeded store, built once (password hashing is slow on purpose) and copied for every test.

    One collection: pool ``p`` assigned to ann1-3 (one package of 6 each) and partly judged, with
    ann1's package finished and a flag by ann2; pool ``p2`` not assigned yet.
    """
    path = fresh_sqlite(tmp_path_factory.mktemp("template") / "app.db")
    store = Store(sqlite_url(path), upgrade=False)
    source = CollectionSource(
        passages=lambda: iter([Passage(d, f"passage <b>{d}</b> text", title="T") for d in DOCS]),
        queries=lambda: iter([Query("q1", "first <script>q</script>"), Query("q2", "second query")]),
        qrels=lambda: iter(()),
    )
    with store.write() as s:
        import_collection(s, source, name="c", format="t", location="m")
        save_pool(s, "c", "p", {"q1": {d: [] for d in DOCS[:3]}, "q2": {d: [] for d in DOCS[3:6]}}, method="depth")
        save_pool(s, "c", "p2", {"q1": {"d6": []}, "q2": {"d7": []}}, method="depth")
        ids = {
            name: add_user(s, name, "correct horse", role).id
            for name, role in (
                ("admin", "admin"),
                ("rev1", "reviewer"),
                ("rev2", "reviewer"),
                ("ann1", "annotator"),
                ("ann2", "annotator"),
                ("ann3", "annotator"),
                ("ann4", "annotator"),
            )
        }
        create_assignments(s, "c", "p", annotators=["ann1", "ann2", "ann3"], seed=1, package_size=6)
        set_pool_adjudicators(s, "c", "p", ["ann4"])  # ann4 labels none of p: listed as its adjudicator
    store.ids = ids
    labels = {
        "ann1": {"d0": 3, "d1": 2, "d2": 0, "d3": 1, "d4": 2, "d5": 0},  # ann1's package is finished
        "ann2": {"d0": 3, "d1": 2, "d2": 1, "d3": 1, "d4": 1},
        "ann3": {"d0": 3, "d1": 0, "d2": 2, "d3": 1},
    }
    for user, grades in labels.items():
        for i, (doc, grade) in enumerate(grades.items()):
            _judge(store, user, doc, grade, elapsed_ms=1000 * (i + 1))
    _judge(store, "ann2", "d5", None, action="flag", note=NOTE)
    store.dispose()  # the last connection closing checkpoints the WAL into the file
    return path, ids


@pytest.fixture
def db(template, tmp_path, monkeypatch):
    """A private copy of the seeded store, opened by the pages through ``$POOLJUDGE_DB``."""
    with private_store(*template, tmp_path, monkeypatch) as store:
        yield store


def _judge(store, user, doc, grade, **kw):
    judge(store, store.ids[user], QUERY_OF[doc], doc, grade, **kw)


def _open(store, script, user, tab=None):
    """``script`` as ``user``; ``tab``: the label of the (lazy) tab to open, whose body alone runs."""
    at = open_as(store, script, user)
    return at if tab is None else open_tab(at, "admin_tab" if script == ADMIN else "review_tab", tab)


def _qc_reviews(store) -> list[tuple[int, int, str]]:
    """Every QC review assignment as ``(reviewer id, assignment id, passage's external id)``."""
    with store.read() as s:
        return [
            tuple(r)
            for r in s.execute(
                select(Assignment.user_id, Assignment.id, PassageRecord.ext_id)
                .join(PassageRecord, PassageRecord.id == Assignment.passage_id)
                .where(Assignment.purpose == "qc")
            )
        ]


def _plain(text: str) -> str:
    return text.replace("\\", "")


def _verbatim(at) -> list[str]:
    """What the browser shows of each st.html body (where texts are shown verbatim): tags dropped, entities decoded."""
    return [html.unescape(re.sub(r"<[^>]*>", "", h.value.replace("<br>", "\n"))) for h in at.html]


def _num(value: str) -> float:
    return float("nan") if value == "n/a" else float(value)


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == pytest.approx(b)


# --------------------------------------------------------------------------- access


@pytest.mark.parametrize("page", [REVIEW, ADMIN])
@pytest.mark.parametrize("user", ["ann1", None])
def test_annotators_and_strangers_see_only_the_access_error(db, page, user):
    at = _open(db, page, user)
    assert not at.exception
    assert [e.value for e in at.error] == ["You do not have access to this page."]
    assert not at.dataframe and not at.metric and not at.get("plotly_chart") and not at.title
    assert not at.text and not at.selectbox and not at.button


def test_reviewer_cannot_open_admin(db):
    at = _open(db, ADMIN, "rev1")
    assert [e.value for e in at.error] == ["You do not have access to this page."] and not at.dataframe


# --------------------------------------------------------------------------- review page


TABLES = {  # a column that only this table has
    "agreement_views": "Fleiss pairs",
    "agreement_annotators": "agrees with majority",
    "agreement_queries": "unanimity",
    "queue_table": "4th annotator",
    "excluded_table": "method",
    "pair_labels": "label",
    "pair_overrides": "reviewer",
    "qc_packages": "QC rounds",
    "qc_rounds": "round",
    "throughput_table": "median seconds / item",
    "flagged_table": "note",
    "labels_methods": "method",
    "users_table": "username",
    "assign_per_annotator": "new tasks",
}


def _table(at, name):
    """The one table on screen that has the column naming it (agreement_queries: the one with 'query' too)."""
    column = TABLES[name]
    found = [d.value for d in at.dataframe if column in d.value.columns]
    if name == "agreement_queries":
        found = [t for t in found if "query" in t.columns and "Fleiss pairs" not in t.columns]
    if name == "excluded_table":
        found = [t for t in found if "reason" in t.columns]
    if name == "labels_methods":
        found = [t for t in found if list(t.columns) == ["method", "pairs"]]
    assert len(found) == 1, f"{len(found)} tables with column {column!r}"
    return found[0]


def _review_as_rev1(store) -> AppTest:
    at = _open(store, REVIEW, "rev1")
    assert not at.exception, at.exception
    return at


def test_agreement_dashboard_matches_the_store(db):
    at = _review_as_rev1(db)
    with db.read() as s:
        labels = standing_labels(s, "c")
    judgments = from_label_map(labels)
    report = agreement_report(judgments)
    graded = report["overall"]["graded"]
    metrics = {m.label: m.value for m in at.metric}
    assert _same(_num(metrics["Fleiss κ"]), round(graded["fleiss_kappa"], 3))
    assert _same(_num(metrics["Cohen κ (mean)"]), round(graded["cohen_kappa"], 3))
    assert _same(_num(metrics["Cohen κ (quadratic)"]), round(graded["cohen_kappa_quadratic"], 3))
    assert _same(_num(metrics["Krippendorff α (ordinal)"]), round(graded["krippendorff_alpha_ordinal"], 3))
    views = _table(at, "agreement_views")
    assert list(views["labels"]) == ["graded 0-3", "binary (>= 1)", "binary (>= 2)"]
    for row, name in zip(views.to_dict("records"), ("graded", "binary_ge1", "binary_ge2")):
        s = report["overall"][name]
        assert _same(row["Fleiss κ"], s["fleiss_kappa"]) and _same(row["Cohen κ quadratic"], s["cohen_kappa_quadratic"])
        assert _same(row["Krippendorff α"], s["krippendorff_alpha_ordinal"]) and _same(row["Cohen κ"], s["cohen_kappa"])
    annotators = _table(at, "agreement_annotators")
    assert list(annotators["annotator"]) == ["ann1", "ann2", "ann3"]
    assert list(annotators["pairs"]) == [6, 5, 4]
    assert list(annotators["label 3"]) == [1, 1, 1]
    for row in annotators.to_dict("records"):
        assert _same(row["Cohen κ"], report["per_annotator"][row["annotator"]]["cohen_kappa"])
    queries = _table(at, "agreement_queries")
    assert list(queries["query"]) == ["q1", "q2"] and list(queries["pairs"]) == [3, 3]
    # the confusion matrix of the first annotator pair with shared items, a shaded table (no chart: the tab
    # draws none, and the other tabs' charts are not drawn either)
    assert not at.get("plotly_chart")
    assert (
        at.selectbox(key="confusion_pair").value["a"] == "ann1"
        and at.selectbox(key="confusion_pair").value["b"] == "ann2"
    )
    expected = confusion_matrix(judgments, "ann1", "ann2")
    [matrix] = [m.proto.body for m in at.get("html") if "pj-confusion" in m.proto.body]
    headers, counts, _styles = matrix_of(matrix)
    assert headers == ["", "0", "1", "2", "3"] and counts == expected
    assert any("Rows: the label ann1 gave" in m.proto.body for m in at.get("html"))


def test_adjudication_queue_and_the_pair_texts_shown_literally(db):
    at = open_tab(_review_as_rev1(db), "review_tab", "Adjudication")
    # d2 (0, 1, 2) waits for ann4; no excluded pairs yet
    queue = _table(at, "queue_table")
    assert queue.to_dict("records") == [
        {"query": "q1", "passage": "d2", "labels": "ann1: 0, ann2: 1, ann3: 2", "4th annotator": "ann4"}
    ]
    assert any(c.value == "No excluded pairs." for c in at.caption)
    open_tab(at, "review_tab", "Pairs")
    # the chosen pair's texts are shown literally, never as HTML
    assert "first <script>q</script>" in _verbatim(at)
    assert "passage <b>d0</b> text" in _verbatim(at)
    assert not any("<script>" in m.value for m in at.markdown)
    assert not any("<script>" in h.value or "<b>d0" in h.value for h in at.html)  # escaped in the HTML


def test_qc_status_throughput_and_final_labels_match_the_store(db):
    at = _review_as_rev1(db)
    with db.read() as s:
        dist = final_label_distribution(s, "c")
    open_tab(at, "review_tab", "Quality control")
    packages = _table(at, "qc_packages")
    assert list(packages["package"]) == ["ann1-p001", "ann2-p001", "ann3-p001"]
    assert list(packages["labelled"]) == [6, 5, 4] and list(packages["total"]) == [6, 6, 6]
    open_tab(at, "review_tab", "Throughput")
    assert [c.proto.id.rsplit("-", 1)[-1] for c in at.get("plotly_chart")] == ["throughput_chart"]
    work = _table(at, "throughput_table")
    assert list(work["label events"]) == [6, 5, 4]
    assert list(work["median seconds / item"]) == [3.5, 3.0, 2.5]
    flags = _table(at, "flagged_table")
    assert list(flags["note"]) == [NOTE] and list(flags["annotator"]) == ["ann2"]
    open_tab(at, "review_tab", "Final labels")
    assert [c.proto.id.rsplit("-", 1)[-1] for c in at.get("plotly_chart")] == ["labels_chart"]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Grade 3"] == str(dist.by_grade[3]) == "1"
    assert metrics["Grade 2"] == "1" and metrics["Grade 1"] == "1" and metrics["Grade 0"] == "0"
    assert metrics["Excluded"] == "0" and metrics["Pending"] == str(dist.pending) == "3"
    methods = _table(at, "labels_methods")
    assert (
        dict(zip(methods["method"], methods["pairs"]))
        == dist.by_method
        == {"unanimous": 2, "majority": 1, "adjudicated": 0, "excluded": 0, "overridden": 0}
    )


def test_reviewer_overrides_a_final_label_with_a_reason(db):
    at = open_tab(_open(db, REVIEW, "rev2"), "review_tab", "Pairs")
    at.selectbox(key="override_query").select("q2").run()
    at.selectbox(key="override_passage").select("d3").run()
    assert "second query" in _verbatim(at) and "passage <b>d3</b> text" in _verbatim(at)
    assert _table(at, "pair_labels").to_dict("records") == [
        {"annotator": "ann1", "label": 1},
        {"annotator": "ann2", "label": 1},
        {"annotator": "ann3", "label": 1},
    ]
    at.radio(key="override_grade").set_value(2)
    at.button(key="override_submit").click().run()
    assert [e.value for e in at.error] == ["an override needs a reason"]  # nothing stored without a reason
    at.text_area(key="override_reason").input("answers it <b>partly</b>")
    at.radio(key="override_grade").set_value(2)
    at.button(key="override_submit").click().run()
    assert not at.exception and not at.error
    assert [_plain(s.value) for s in at.success] == ["Final label of q2 / d3 set to 2."]
    with db.read() as s:
        q, d = pair_ids(s, QUERY_OF["d3"], "d3")
        row = s.scalar(select(FinalLabel).where(FinalLabel.query_id == q, FinalLabel.passage_id == d))
        assert (row.grade, row.method, row.reason, row.decided_by) == (
            2,
            "overridden",
            "answers it <b>partly</b>",
            db.ids["rev2"],
        )
    overrides = _table(at, "pair_overrides")
    assert list(overrides["reviewer"]) == ["rev2"] and list(overrides["reason"]) == ["answers it <b>partly</b>"]
    open_tab(at, "review_tab", "Final labels")
    assert {m.label: m.value for m in at.metric}["Grade 2"] == "2"  # cached tables refreshed after the override


# --------------------------------------------------------------------------- admin page


def test_admin_adds_a_user_and_resets_a_password(db):
    at = _open(db, ADMIN, "admin")
    assert not at.exception
    assert list(_table(at, "users_table")["username"]) == ["admin", "ann1", "ann2", "ann3", "ann4", "rev1", "rev2"]
    at.text_input(key="new_username").input("ann5")
    at.text_input(key="new_password").input("short")
    at.button(key="add_user").click().run()
    assert [_plain(e.value) for e in at.error] == ["a password needs at least 8 characters"]
    at.text_input(key="new_username").input("<b>ann5</b>")
    at.selectbox(key="new_role").select("reviewer")
    at.text_input(key="new_password").input("a long password")
    at.button(key="add_user").click().run()
    assert not at.exception and not at.error
    assert [_plain(s.value) for s in at.success] == ["Added <b>ann5</b> (reviewer)."]
    assert "<b>ann5</b>" in list(_table(at, "users_table")["username"])
    with db.read() as s:
        assert s.scalar(select(User.role).where(User.username == "<b>ann5</b>")) == "reviewer"
    # disable, then reset a password
    at.selectbox(key="state_user").select_index(
        [o for o in at.selectbox(key="state_user").options].index(
            next(o for o in at.selectbox(key="state_user").options if o.startswith("ann4"))
        )
    ).run()
    at.button(key="toggle_user").click().run()
    with db.read() as s:
        assert s.scalar(select(User.active).where(User.username == "ann4")) is False
    at.selectbox(key="reset_user").select("rev1")
    at.text_input(key="reset_password").input("another horse")
    at.button(key="reset_submit").click().run()
    assert not at.error
    with db.read() as s:
        assert verify_password(s.scalar(select(User.password_hash).where(User.username == "rev1")), "another horse")


def test_admin_creates_assignments_through_the_form(db):
    at = _open(db, ADMIN, "admin", "Assignments")
    at.selectbox(key="assign_pool").select("p2")
    assert at.multiselect(key="assign_annotators").value == ["ann1", "ann2", "ann3", "ann4"]
    at.multiselect(key="assign_annotators").unselect("ann1")
    at.number_input(key="assign_package_size").set_value(1)
    at.checkbox(key="assign_group").check()
    at.number_input(key="assign_seed").set_value(5)
    at.button(key="assign_submit").click().run()
    assert not at.exception and not at.error
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["Pairs"], metrics["New tasks"]) == ("2", "6")
    with db.read() as s:
        rows = s.execute(
            select(User.username, func.count())
            .join(Assignment, Assignment.user_id == User.id)
            .join(PassageRecord, PassageRecord.id == Assignment.passage_id)
            .where(PassageRecord.ext_id.in_(["d6", "d7"]))
            .group_by(User.username)
        ).all()
        new_packages = s.scalar(select(func.count()).select_from(Package)) - 3
    assert dict(rows) == {"ann2": 2, "ann3": 2, "ann4": 2}
    assert metrics["New packages"] == str(new_packages) == "6"  # package size 1
    per = _table(at, "assign_per_annotator")
    assert dict(zip(per["annotator"], per["new tasks"])) == {"ann2": 2, "ann3": 2, "ann4": 2}


def test_admin_runs_a_qc_round_and_freezes_qrels(db):
    at = _open(db, ADMIN, "admin", "Quality control")
    assert at.selectbox(key="qc_package").options == ["ann1-p001 (ann1, open)"]
    assert at.multiselect(key="qc_reviewers").value == ["rev1", "rev2"]
    at.number_input(key="qc_sample").set_value(3)
    at.button(key="qc_start").click().run()
    assert not at.exception and not at.error
    with db.read() as s:
        [qc] = s.scalars(select(QcRound)).all()
        assert (qc.sample_size, qc.status, qc.threshold) == (3, "reviewing", 0.93)
        [pkg] = [p for p in package_overview(s) if p.name == "ann1-p001"]
        assert pkg.status == "in_qc"
    # reviewers agree with ann1 on every sampled pair
    ann1 = {"d0": 3, "d1": 2, "d2": 0, "d3": 1, "d4": 2, "d5": 0}
    for uid, aid, doc in _qc_reviews(db):
        with db.write() as s:
            record_judgment(s, uid, aid, ann1[doc])
    at.run()
    assert list(_table(at, "qc_rounds")["reviewed"]) == ["rev1: 3/3, rev2: 3/3"]
    at.button(key="qc_close").click().run()
    assert not at.exception and not at.error
    assert "accuracy 1.000 on 3 pairs, decision **pass**" in _plain(at.success[0].value)
    rounds = _table(at, "qc_rounds")
    assert list(rounds["status"]) == ["passed"] and list(rounds["accuracy"]) == [1.0]
    # freeze the current final labels
    open_tab(at, "admin_tab", "Qrels")
    at.text_input(key="freeze_name").input("round-1")
    at.text_area(key="freeze_note").input("first pass")
    at.button(key="freeze_submit").click().run()
    assert not at.exception and not at.error
    assert [_plain(s.value) for s in at.success] == [  # the pairs a freeze leaves out, by reason (issue 20)
        "Froze 3 labels as round-1. Left out 3 judged pairs without a final label: 1 waiting for a 4th label, "
        "1 flagged, 1 waiting for more labels."
    ]
    with db.read() as s:
        version = s.scalar(select(QrelsVersion).where(QrelsVersion.name == "round-1"))
        assert (version.source, version.note, version.created_by) == ("frozen", "first pass", db.ids["admin"])
    at.text_input(key="freeze_name").input("round-1")
    at.button(key="freeze_submit").click().run()
    assert [_plain(e.value) for e in at.error] == ["a qrels version named 'round-1' already exists"]
