"""RGB-shaped qa-jsonl files in each of RGB's three published shapes import into a store (issue 10).

The records are the ones :mod:`tests.core.formats.test_qa_jsonl` writes in
the refine, counterfactual (fact) and information-integration (int) shapes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select

from core.errors import FormatError
from db.importer import import_path
from db.models import Collection, PassageRecord, QrelsEntry, QueryRecord
from db.queries import iter_passages, iter_queries, stored_qrels
from tests.core.formats.test_qa_jsonl import (
    F_P1,
    F_P2,
    F_W1,
    FACT_LINES,
    INT_LINES,
    LINES,
    _pid,
)


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    return path


def _counts(store) -> dict[str, int]:
    with store.read() as s:
        return {
            t.__tablename__: s.scalar(select(func.count()).select_from(t))
            for t in (Collection, PassageRecord, QueryRecord, QrelsEntry)
        }


@pytest.mark.parametrize(
    ("shape", "lines", "passages", "answers", "grades"),
    [
        ("refine", LINES, 4, [["12人"], [["12", "twelve"]]], {"0": {1: 2, 0: 1}, "1": {1: 2, 0: 2}}),
        (
            "fact",
            FACT_LINES,
            7,
            [["Tampa, Florida"], [["July 21 2017", "Jul 21, 2017"]]],
            {"0": {1: 2, 0: 3}, "1": {1: 1, 0: 2}},
        ),
        (
            "int",
            INT_LINES,
            8,
            [[["1313851", "131万"], ["187万", "186.35万"]], ["1月3日", "1月12日"]],
            {"0": {1: 3, 0: 1}, "1": {1: 3, 0: 2}},
        ),
    ],
)
def test_rgb_shapes_import_with_the_right_passage_and_answer_counts(
    tmp_path, store, shape, lines, passages, answers, grades
):
    path = _write(tmp_path / f"{shape}.json", lines)
    summary = import_path(store, "qa-jsonl", path, name=f"rgb-{shape}")
    assert (summary.passages_added, summary.queries_added) == (passages, 2)
    assert summary.qrels_added == sum(n for per in grades.values() for n in per.values())
    with store.read() as s:
        assert len(list(iter_passages(s, f"rgb-{shape}"))) == passages
        queries = list(iter_queries(s, f"rgb-{shape}"))
        qrels = stored_qrels(s, f"rgb-{shape}")
    assert [q.answers for q in queries] == answers
    assert sum(len(a) for a in answers) == {"refine": 2, "fact": 2, "int": 4}[shape]
    by_grade = {qid: {g: list(docs.values()).count(g) for g in set(docs.values())} for qid, docs in qrels.items()}
    assert by_grade == grades


def test_positive_wrong_passages_are_stored_with_grade_zero(tmp_path, store):
    import_path(store, "qa-jsonl", _write(tmp_path / "fact.json", FACT_LINES), name="fact")
    with store.read() as s:
        qrels = stored_qrels(s, "fact")
        texts = {p.id: p.text for p in iter_passages(s, "fact")}
    assert texts[_pid(F_W1)] == F_W1
    assert qrels["0"][_pid(F_W1)] == 0
    assert qrels["0"][_pid(F_P1)] == 1


def test_a_conflict_on_a_positive_wrong_pair_names_its_file_and_line(tmp_path, store):
    """An origin ``file:line positive_wrong`` still locates the error at file:line."""
    # the same query, where F_W1 was judged positive
    earlier = dict(FACT_LINES[0], positive=[F_P1, F_P2, F_W1], positive_wrong=[])
    import_path(store, "qa-jsonl", _write(tmp_path / "earlier.json", [earlier]), name="c")
    before = _counts(store)
    later = _write(tmp_path / "later.json", FACT_LINES[:1])
    with pytest.raises(FormatError) as err:
        import_path(store, "qa-jsonl", later, name="c", mode="merge")
    assert (err.value.path, err.value.line) == (str(later), 1)
    assert f"({'0'!r}, {_pid(F_W1)!r}) already has grade 1" in err.value.message
    assert "positive_wrong" in err.value.message
    assert _counts(store) == before


def test_the_import_summary_lists_the_ignored_keys_once(tmp_path, store):
    path = _write(tmp_path / "int.json", INT_LINES)
    summary = import_path(store, "qa-jsonl", path, name="int")
    assert summary.notes == [
        f"ignored key 'asnwer1' on 2 lines (first: {path}:1)",
        f"ignored key 'answer2' on 2 lines (first: {path}:1)",
        f"ignored key 'ansewr3' on 1 line (first: {path}:2)",
    ]
    fact = _write(tmp_path / "fact.json", FACT_LINES)
    assert import_path(store, "qa-jsonl", fact, name="fact").notes == [
        "positive_wrong texts also listed as positive for the same query keep their positive grade: "
        f"1 text on 1 line (first: {fact}:2)"
    ]
