"""The Pooling page's retriever help and ready-made retrievers come from the kinds' declared options."""

from __future__ import annotations

from pooljudge.retrievers import RETRIEVERS, register_retriever
from tests import toy_retriever
from tests.app.apptest import VIEWS, open_as_admin
from tests.app.test_pooling_presets import add_collection

SPECS_LABEL = "Other retriever specs (separated by ';')"


def test_the_spec_help_lists_each_kind_s_declared_options(db):
    add_collection(db, "english", "en")
    at = open_as_admin(db, VIEWS / "pooling.py")
    [specs] = [t for t in at.text_input if t.label == SPECS_LABEL]
    k1 = next(o for o in RETRIEVERS["bm25"].OPTIONS if o.name == "k1")
    interpolate = next(o for o in RETRIEVERS["rerank"].OPTIONS if o.name == "interpolate")
    assert f"- k1 (float, default 1.5): {k1.help}" in specs.help
    assert f"- interpolate (float, default 0.0): {interpolate.help}" in specs.help
    assert "**hierarchical**" in specs.help


def test_a_registered_kind_s_options_and_presets_reach_the_page(db):
    add_collection(db, "english", "en")
    register_retriever("toy", toy_retriever)
    try:
        at = open_as_admin(db, VIEWS / "pooling.py")
    finally:
        RETRIEVERS.pop("toy")
    [specs] = [t for t in at.text_input if t.label == SPECS_LABEL]
    assert "**toy**\n- min_overlap (int, default 1): distinct query words a passage must hold to be retrieved" in (
        specs.help
    )
    picker = next(m for m in at.multiselect if m.label == "New retrievers to run")
    assert picker.options[-1] == "Toy: query words in common"
