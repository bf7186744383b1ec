"""The adversarial set for ``qa-jsonl``: malformed inputs, generated here, refused at ``file:line``.

The qa-jsonl reader applies the rules every other reader applies (issue 10):
one JSON parser (:func:`core.formats._io.load_json`: duplicate keys, NaN,
deep nesting, huge integers), one id rule (:func:`core.formats._rows.check_id`:
length, control characters, byte-order marks, surrounding whitespace) and one
text rule (:func:`core.formats._rows.check_text`: length limits, NUL,
invisible-only text), plus its own record shape.  Each row of :data:`CASES`
is one malformed-input kind: the file as bytes, the line and a fragment of
the message.  A sample is also imported into a store, which must be left
unchanged.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import NamedTuple

import pytest

from core.errors import FormatError
from core.formats import read_source
from core.limits import ID_MAX_CHARS, PASSAGE_TEXT_MAX_CHARS, QUERY_TEXT_MAX_CHARS

GOOD = {"id": 1, "query": "a question", "answer": "yes", "positive": ["a good passage"], "negative": ["a bad one"]}


def line(**over: object) -> bytes:
    """One record: the valid one with some fields replaced (``None`` removes a field)."""
    record = {k: v for k, v in {**GOOD, "id": 2, **over}.items() if v is not None}
    return json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n"


FIRST = json.dumps(GOOD).encode() + b"\n"


def after_first(data: bytes) -> bytes:
    return FIRST + data


class Case(NamedTuple):
    kind: str
    content: bytes
    line: int
    fragment: str


CASES = [
    # ---- ids: the one id rule
    Case(
        "id with surrounding spaces",
        after_first(line(id=" q2 ")),
        2,
        "query id ' q2 ' has leading or trailing whitespace",
    ),
    Case(
        "NUL in an id",
        after_first(line(id="q\x002")),
        2,
        "query id 'q\\x002' contains the control character U+0000 at character 2",
    ),
    Case(
        "escape code in an id",
        after_first(line(id="q\x1b[31m")),
        2,
        "query id 'q\\x1b[31m' contains the control character U+001B at character 2",
    ),
    Case("tab in an id", after_first(line(id="q\t2")), 2, "contains the control character U+0009 at character 2"),
    Case(
        "byte-order mark inside an id",
        after_first(line(id="q\ufeff2")),
        2,
        "contains a byte-order mark (U+FEFF) at character 2",
    ),
    Case(
        "10,000-character id",
        after_first(line(id="q" * 10_000)),
        2,
        f"query id is 10,000 characters long, the limit is {ID_MAX_CHARS}",
    ),
    Case(
        "id of 600 digits given as a JSON number",
        after_first(f'{{"id": {"7" * 600}, "query": "q"}}\n'.encode()),
        2,
        f"query id is 600 characters long, the limit is {ID_MAX_CHARS}",
    ),
    Case("id of zero-width spaces", after_first(line(id="\u200b\u200b")), 2, "field 'id' is empty"),
    Case("decimal id", after_first(line(id=2.5)), 2, "field 'id' must be a string, got float"),
    Case("duplicate query id", after_first(line(id=1)), 2, "duplicate query id '1' (first at line 1)"),
    # ---- JSON: the one parser
    Case(
        "duplicate JSON key",
        after_first(b'{"id": "q2", "id": "q9", "query": "q", "positive": [], "negative": []}\n'),
        2,
        "key 'id' appears twice in the same JSON object",
    ),
    Case(
        "duplicate key 'positive'",
        after_first(b'{"id": "q2", "query": "q", "positive": ["x"], "positive": ["y"], "negative": []}\n'),
        2,
        "key 'positive' appears twice in the same JSON object",
    ),
    Case("100,000-deep nested JSON", after_first(b"[" * 100_000 + b"]" * 100_000 + b"\n"), 2, "nested too deeply"),
    Case(
        "NaN in JSON",
        after_first(b'{"id": "q2", "query": "q", "answer": NaN, "positive": [], "negative": []}\n'),
        2,
        "NaN is not valid JSON",
    ),
    Case("integer of 5,000 digits", after_first(f'{{"id": {"9" * 5000}, "query": "q"}}\n'.encode()), 2, "invalid JSON"),
    Case(
        "byte-order mark at the start of line 2",
        FIRST + b"\xef\xbb\xbf" + line(),
        2,
        "byte-order mark (U+FEFF) at the start of the line",
    ),
    Case("invalid UTF-8", FIRST + b'{"id": "q\xff2", "query": "q"}\n', 2, "invalid UTF-8"),
    Case(
        "corrupt gzip stream",
        (lambda g: g[:10] + b"\xff" * 8 + g[18:])(gzip.compress(FIRST * 50, mtime=0)),
        1,
        "cannot read compressed data",
    ),
    # ---- texts: the one text rule
    Case(
        "query over the length limit",
        after_first(line(query="x" * (QUERY_TEXT_MAX_CHARS + 1))),
        2,
        f"field 'query' is {QUERY_TEXT_MAX_CHARS + 1:,} characters long, the limit is {QUERY_TEXT_MAX_CHARS:,}",
    ),
    Case("query of zero-width spaces", after_first(line(query="\u200b\u200c\ufeff")), 2, "field 'query' is empty"),
    Case(
        "passage over the length limit",
        after_first(line(positive=["p" * (PASSAGE_TEXT_MAX_CHARS + 1)])),
        2,
        f"positive[0] is {PASSAGE_TEXT_MAX_CHARS + 1:,} characters long, the limit is {PASSAGE_TEXT_MAX_CHARS:,}",
    ),
    Case(
        "NUL in a passage text",
        after_first(line(negative=["a\x00b"])),
        2,
        "negative[0] contains a NUL character (U+0000) at character 2",
    ),
    Case(
        "passage of zero-width spaces",
        after_first(line(negative=["x", "\u200b \u200b"])),
        2,
        "negative[1] is an empty passage text",
    ),
    Case(
        "NUL in a positive_wrong text",
        after_first(line(positive_wrong=["w\x00"])),
        2,
        "positive_wrong[0] contains a NUL character (U+0000) at character 2",
    ),
    Case(
        "NUL in an answer",
        after_first(line(answer=["ok", "a\x00"])),
        2,
        "answer[1] contains a NUL character (U+0000) at character 2",
    ),
    # ---- the record shape
    Case(
        "positive mixing texts and per-part lists",
        after_first(line(positive=["p", ["x"]])),
        2,
        "positive[0] must be a list of passage texts like the other parts, got str",
    ),
    Case(
        "number in a per-part positive list",
        after_first(line(positive=[["p"], [3]])),
        2,
        "positive[1][0] must be a string, got int",
    ),
    Case(
        "empty text in a per-part positive list",
        after_first(line(positive=[["p"], ["  "]])),
        2,
        "positive[1][0] is an empty passage text",
    ),
    Case(
        "positive_wrong not a list",
        after_first(line(positive_wrong="w")),
        2,
        "field 'positive_wrong' must be a list of passage texts, got str",
    ),
    Case(
        "answer a number",
        after_first(line(answer=70)),
        2,
        "field 'answer' must be a string, or a list of strings or lists of strings, got int",
    ),
    Case(
        "text positive in one part and negative",
        after_first(line(positive=[["p"], ["x"]], negative=["x"])),
        2,
        "the same text is both positive and negative for query '2'",
    ),
    Case("missing positive", after_first(line(positive=None)), 2, "missing field 'positive'"),
    Case("a JSON array instead of an object", after_first(b'["q2", "q"]\n'), 2, "expected a JSON object"),
]
KINDS = [case.kind for case in CASES]


def _write(root: Path, case: Case) -> Path:
    path = root / ("qa.jsonl.gz" if case.content[:2] == b"\x1f\x8b" else "qa.jsonl")
    path.write_bytes(case.content)
    return path


def _consume(path: Path) -> None:
    source = read_source("qa-jsonl", path)
    for stream in (source.passages, source.queries, source.qrels):
        for _ in stream():
            pass


def test_the_kinds_are_many_and_distinct() -> None:
    assert len(KINDS) == len(set(KINDS))
    assert len(KINDS) >= 8


def test_the_baseline_reads(tmp_path: Path) -> None:
    # every case differs from this valid file, so the error is the case's
    path = tmp_path / "qa.jsonl"
    path.write_bytes(FIRST + line())
    _consume(path)
    assert [q.id for q in read_source("qa-jsonl", path).queries()] == ["1", "2"]


@pytest.mark.parametrize("case", CASES, ids=KINDS)
def test_refused_at_file_line(tmp_path: Path, case: Case) -> None:
    path = _write(tmp_path, case)
    with pytest.raises(FormatError) as info:
        _consume(path)
    error = info.value
    assert (error.path, error.line) == (os.fspath(path), case.line), str(error)
    assert str(error).startswith(f"{path}:{case.line}: ")
    assert case.fragment in error.message, error.message
    assert len(str(error)) < 500  # a long value is never echoed whole


def test_an_id_of_exactly_the_limit_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "qa.jsonl"
    path.write_bytes(FIRST + line(id="q" * ID_MAX_CHARS))
    assert [len(q.id) for q in read_source("qa-jsonl", path).queries()] == [1, ID_MAX_CHARS]


STORE_SAMPLE = [
    "id with surrounding spaces",
    "NUL in an id",
    "duplicate JSON key",
    "passage over the length limit",
    "positive mixing texts and per-part lists",
]


def test_refused_imports_leave_the_store_unchanged(store, tmp_path: Path) -> None:
    from sqlalchemy import func, select

    from db.importer import import_path
    from db.models import Collection, ImportRecord, PassageRecord, QrelsEntry, QueryRecord

    def counts() -> dict[str, int]:
        with store.read() as s:
            return {
                t.__tablename__: s.scalar(select(func.count()).select_from(t))
                for t in (Collection, PassageRecord, QueryRecord, QrelsEntry, ImportRecord)
            }

    good = tmp_path / "good.jsonl"
    good.write_bytes(FIRST)
    import_path(store, "qa-jsonl", good, name="base")
    before = counts()
    assert (before["passages"], before["queries"], before["qrels_entries"]) == (2, 1, 2)
    by_kind = {case.kind: case for case in CASES}
    for number, kind in enumerate(STORE_SAMPLE):
        root = tmp_path / f"case{number}"
        root.mkdir()
        path = _write(root, by_kind[kind])
        with pytest.raises(FormatError) as info:
            import_path(store, "qa-jsonl", path, name="base", mode="merge")
        assert (info.value.path, info.value.line) == (os.fspath(path), 2), kind
        assert counts() == before, kind


def test_a_megabyte_answer_object_is_not_echoed(tmp_path: Path) -> None:
    path = tmp_path / "qa.jsonl"
    path.write_bytes(after_first(line(answer=[{"x": "y" * 1_000_000}])))
    with pytest.raises(FormatError) as info:
        _consume(path)
    assert (info.value.line, len(str(info.value)) < 300) == (2, True)
    assert info.value.message.startswith("answer[0] must be a string or a list of strings, got {")
