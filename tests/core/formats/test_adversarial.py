"""The adversarial set: malformed inputs, generated here, that every reader refuses at ``file:line``.

Issue 10 tried 180 adversarial inputs on the readers and ``pooljudge eval``;
37 got through or crashed with a traceback.  :data:`CASES` keeps those and the
refusals that already held as data: each row is one malformed-input *kind*,
the format it is fed to (through :func:`core.formats.read_source`, the call
the importer makes), the files as bytes, and the ``file:line`` and message
fragment of the :class:`~core.errors.FormatError` it must raise.  A sample is
also imported into a store, which must be left unchanged.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.errors import FormatError
from core.formats import read_source
from core.limits import ID_MAX_CHARS
from tests.core.formats.adversarial_base import BASE, Case, consume, loop, write_case
from tests.core.formats.adversarial_cases_structured import STRUCTURED_CASES
from tests.core.formats.adversarial_cases_tabular import TABULAR_CASES

CASES = TABULAR_CASES + STRUCTURED_CASES
KINDS = [case.kind for case in CASES]


def _problem(kind: str) -> str:
    """The malformed-input kind without its format (``"trec-qrels: NUL in a document id"`` -> ``"NUL in a document id"``)."""
    return kind.split(": ", 1)[1]


def test_the_set_is_large_and_its_kinds_distinct() -> None:
    assert len(KINDS) == len(set(KINDS))
    assert len({_problem(kind) for kind in KINDS}) >= 60
    assert {case.format for case in CASES} == set(BASE)


@pytest.mark.parametrize("fmt", sorted(BASE))
def test_baselines_read(tmp_path: Path, fmt: str) -> None:
    # each case differs from a baseline that reads without error, so the error is the case's
    consume(fmt, write_case(tmp_path, Case("baseline", fmt, {}, "", 0, "")))


@pytest.mark.parametrize("case", CASES, ids=KINDS)
def test_refused_at_file_line(tmp_path: Path, case: Case) -> None:
    path = write_case(tmp_path, case)
    with pytest.raises(FormatError) as info:
        consume(case.format, path)
    error = info.value
    assert (error.path, error.line) == (os.fspath(tmp_path / case.file), case.line), str(error)
    assert str(error).startswith(f"{tmp_path / case.file}:{case.line}: ")
    assert case.fragment in error.message
    assert len(str(error)) < 500  # a 50 MB or 10,000-character value is never echoed whole


def test_a_50_megabyte_id_is_refused_without_echoing_it(tmp_path: Path) -> None:
    path = tmp_path / "r.trec"
    path.write_bytes(b"q1 Q0 d1 1 2.0 x\nq1 Q0 " + b"d" * 50_000_000 + b" 2 1.0 x\n")
    with pytest.raises(FormatError) as info:
        consume("trec-run", os.fspath(path))
    assert (info.value.path, info.value.line) == (os.fspath(path), 2)
    assert info.value.message.startswith(
        f"document id (column 3) is 50,000,000 characters long, the limit is {ID_MAX_CHARS} ('dddd"
    )
    assert len(str(info.value)) < 300


def test_an_id_of_exactly_the_limit_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "t.qrels"
    path.write_text(f"q1 0 {'d' * ID_MAX_CHARS} 1\n", encoding="utf-8")
    assert [e.doc_id for e in read_source("trec-qrels", path).qrels()] == ["d" * ID_MAX_CHARS]


def test_a_byte_order_mark_at_the_start_of_the_file_is_still_dropped(tmp_path: Path) -> None:
    path = tmp_path / "t.qrels"
    path.write_bytes(b"\xef\xbb\xbfq1 0 d1 1\n")
    assert [(e.query_id, e.doc_id) for e in read_source("trec-qrels", path).qrels()] == [("q1", "d1")]


@pytest.mark.parametrize(
    ("data", "texts"),
    [
        (b"0\tfirst\n1\tsecond\r", ["first", "second"]),  # a lone CR ending the last line
        (b"0\tfirst\r\n1\tsecond\r\n", ["first", "second"]),
        (b"0\tfirst\r\n1\tsecond", ["first", "second"]),
        (b"0\tin\rside\n", ["in\rside"]),  # a CR inside a line is text, not a line end
    ],
)
def test_line_ends(tmp_path: Path, data: bytes, texts: list[str]) -> None:
    path = tmp_path / "collection.tsv"
    path.write_bytes(data)
    assert [p.text for p in read_source("msmarco", path).passages()] == texts


@pytest.mark.parametrize(
    ("fmt", "make", "named", "message"),
    [
        ("trec-qrels", lambda root: loop(root / "t.qrels"), "t.qrels", "symlink loop"),
        ("json-qrels", lambda root: loop(root / "q.json"), "q.json", "symlink loop"),
        ("msmarco", lambda root: loop(root / "collection.tsv"), "collection.tsv", "symlink loop"),
        ("msmarco", lambda root: loop(root / "qrels.dev.tsv"), "qrels.dev.tsv", "symlink loop"),
        ("beir", lambda root: loop(root / "corpus.jsonl"), "corpus.jsonl", "symlink loop"),
        ("beir", lambda root: loop(root / "qrels" / "dev.tsv"), "qrels/dev.tsv", "symlink loop"),
        (
            "trec-run",
            lambda root: (root / "r.trec").symlink_to("gone.trec"),
            "r.trec",
            "broken symlink: it points to 'gone.trec', which does not exist",
        ),
    ],
    ids=[
        "trec-qrels loop",
        "json-qrels loop",
        "msmarco collection loop",
        "msmarco qrels loop",
        "beir corpus loop",
        "beir qrels loop",
        "trec-run broken link",
    ],
)
def test_symlink_loops_are_not_called_missing(tmp_path: Path, fmt, make, named: str, message: str) -> None:
    target, files = BASE[fmt]
    for rel, data in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        if rel != named:
            (tmp_path / rel).write_bytes(data)
    make(tmp_path)
    path = os.fspath(tmp_path / target) if target != "." else os.fspath(tmp_path)
    with pytest.raises(FormatError) as info:
        consume(fmt, path)
    assert info.value.path == os.fspath(tmp_path / named)
    assert info.value.line is None
    assert info.value.message.startswith(message)
    assert "not found" not in info.value.message
