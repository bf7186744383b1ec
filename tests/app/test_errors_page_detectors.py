"""The Error analysis page names the detector of every suggestion and shows its two phrases (issue 22, acceptance 3)."""

from __future__ import annotations

import pytest

from db.error_analysis import suggest_tags
from tests.app.apptest import open_as_admin
from tests.app.test_errors_page import PAGE, C, dashboards, frame_with, sampled, seed, tags, visible
from tests.core.detectors.test_alignment_detector import FakeEncoder

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test

# a pair the rules miss (single sentence-initial names), stored on the seeded pair (q3, e2)
ALIGNED = {"query_id": "q3", "doc_id": "e2", "query": "Toyota mileage", "text": "Honda averages 36 mpg in the city."}


def test_each_suggestion_names_its_detector(db):
    seed(db)
    at = sampled(db)
    at.button(key="errors_suggest").click().run()
    assert not at.exception
    stored = {t["category"]: t["evidence"].get("detector") for t in tags(db, query_id="q1") if t["doc_id"] == "s17"}
    assert stored["numeral_mismatch"] == "numerals" and stored["false_negative"] == "false_negatives"
    # the first pair (q1, s17): each tag's caption names its detector, next to the evidence of the two numbers
    captions = [m.value for m in at.markdown if ":small[suggested" in m.value]
    assert any("detector numerals" in c for c in captions)
    assert any("detector false\\_negatives" in c or "detector false_negatives" in c for c in captions)
    assert "query has 2016; passage has 2017" in visible(at)


def test_an_alignment_suggestion_shows_both_phrases_and_the_cosine(db):
    seed(db)
    with db.write() as s:
        assert suggest_tags(s, C, "bm25", [ALIGNED], encoder=FakeEncoder()) == 1
    [tag] = [t for t in tags(db, query_id="q3") if t["doc_id"] == "e2"]
    assert tag["category"] == "entity_mismatch" and tag["evidence"]["detector"] == "alignment"
    ev = tag["evidence"]["evidence"]
    assert (ev["query_phrase"], ev["passage_phrase"], ev["kind"]) == ("Toyota", "Honda", "name")
    at = dashboards(open_as_admin(db, PAGE, default_timeout=60))
    [row] = [r for _, r in frame_with(at, "detector").iterrows() if r["tag"] == tag["id"]]
    assert row["detector"] == "alignment" and row["source"] == "detector"
    summary = (
        f"embedding alignment: query phrase 'Toyota' is closest to passage phrase 'Honda' "
        f"(both names, cosine {ev['cosine']:.2f} >= {ev['threshold']:.2f})"
    )
    assert row["evidence"] == summary
    # the drill-down of that tag: its caption names the detector, its evidence the two phrases
    at.selectbox(key="errors_drill").set_value(tag["id"]).run()
    assert not at.exception
    assert any("detector alignment" in m.value for m in at.markdown)
    assert summary in visible(at)  # escaped HTML (st.html), shown as the text itself


def test_rule_and_alignment_tags_of_stored_rows_without_a_detector_name(db):
    """Tags stored before suggestions named their detector are read as their category's rule detector's."""
    from pooljudge.ui.error_dashboards import evidence_detector, evidence_summary

    old = {"category": "numeral_mismatch", "evidence": {"query": ["2016"], "passage": ["2017"]}, "spans": []}
    assert evidence_detector(old) == "numerals"
    assert evidence_detector({"note": "mine"}, "numeral_mismatch") == ""  # an analyst's tag
    aligned = {
        "category": "numeral_mismatch",
        "detector": "alignment",
        "evidence": {
            "query_phrase": "iPhone 13",
            "passage_phrase": "iPhone 12",
            "kind": "name",
            "cosine": 0.86,
            "threshold": 0.4,
        },
        "spans": [],
    }
    assert evidence_detector(aligned) == "alignment"
    assert evidence_summary(aligned) == (
        "embedding alignment: query phrase 'iPhone 13' is closest to passage phrase 'iPhone 12' "
        "(both names, cosine 0.86 >= 0.40)"
    )
