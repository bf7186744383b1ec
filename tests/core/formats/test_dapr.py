"""Tests for core.formats.dapr (DAPR chunked documents and judged chunks)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from core.errors import FormatError
from core.formats.dapr import read_dapr
from core.types import Passage, QrelEntry, Query

SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "data"

DOC_OWL = {
    "id": "doc-owl",
    "title": "  Owl\r\n",
    "chunks": [
        {"id": "doc-owl-0", "text": "Owls are birds from the order Strigiformes."},
        {"id": "doc-owl-1", "text": "Most owls hunt at night."},
    ],
}
DOC_TEA = {
    "id": 17,
    "title": "Tea",
    "chunks": [
        {"id": "17-1", "text": "Tea is an aromatic beverage."},
        {"id": "17-2", "text": ""},
        {"id": "17-3", "text": "Green tea is not oxidised."},
    ],
}
DOC_MOON = {
    "id": "moon",
    "title": "\r\nMoon\r\n",
    "chunks": [
        {"id": "moon-a", "text": "The Moon is Earth's only natural satellite."},
        {"id": "moon-b", "text": "It formed about 4.5 billion years ago."},
        {"id": "moon-c", "text": "Its surface is covered in regolith."},
    ],
}


def judged(doc: dict, index: int, grade: int = 1) -> dict:
    return {"chunk": doc["chunks"][index], "judgement": grade, "belonging_doc": doc}


def jsonl(path: Path, records: list[object], *, gz: bool = False) -> Path:
    data = "".join(json.dumps(r) + "\n" for r in records).encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    jsonl(tmp_path / "corpus.jsonl", [DOC_OWL, DOC_TEA])
    jsonl(
        tmp_path / "train.jsonl",
        [
            {"query": {"id": "q1", "text": "when did the moon form"}, "judged_chunks": [judged(DOC_MOON, 1, 2)]},
            {
                "query": {"id": 2, "text": "what do owls eat"},
                "judged_chunks": [judged(DOC_OWL, 1), judged(DOC_MOON, 0, 0)],
            },
        ],
    )
    jsonl(
        tmp_path / "test.jsonl.gz",
        [
            {"query": {"id": "q3", "text": "is green tea oxidised"}, "judged_chunks": [judged(DOC_TEA, 2)]},
            {
                "query": {"id": "q3", "text": "is green tea oxidised"},
                "judged_chunks": [judged(DOC_TEA, 0), judged(DOC_TEA, 2)],
            },
        ],
        gz=True,
    )
    (tmp_path / "README.md").write_text("not a data file")
    return tmp_path


def test_folder(folder: Path) -> None:
    src = read_dapr(folder)
    corpus, train, test = (str(folder / n) for n in ("corpus.jsonl", "train.jsonl", "test.jsonl.gz"))
    passages = list(src.passages())
    assert passages == [
        Passage("doc-owl-0", "Owls are birds from the order Strigiformes.", "Owl", "doc-owl", 0, "en"),
        Passage("doc-owl-1", "Most owls hunt at night.", "Owl", "doc-owl", 1, "en"),
        Passage("17-1", "Tea is an aromatic beverage.", "Tea", "17", 0, "en"),
        Passage("17-2", "", "Tea", "17", 1, "en"),  # blank chunks are kept (positions match the source)
        Passage("17-3", "Green tea is not oxidised.", "Tea", "17", 2, "en"),
        # documents known only as belonging_doc come after the corpus
        Passage("moon-a", "The Moon is Earth's only natural satellite.", "Moon", "moon", 0, "en"),
        Passage("moon-b", "It formed about 4.5 billion years ago.", "Moon", "moon", 1, "en"),
        Passage("moon-c", "Its surface is covered in regolith.", "Moon", "moon", 2, "en"),
    ]
    assert [p.origin for p in passages] == [f"{corpus}:1"] * 2 + [f"{corpus}:2"] * 3 + [f"{train}:1"] * 3

    queries = list(src.queries())
    assert queries == [
        Query("q1", "when did the moon form", "train", language="en"),
        Query("2", "what do owls eat", "train", language="en"),
        Query("q3", "is green tea oxidised", "test", language="en"),  # two lines, one query
    ]
    assert [q.origin for q in queries] == [f"{train}:1", f"{train}:2", f"{test}:1"]

    qrels = list(src.qrels())
    assert qrels == [
        QrelEntry("q1", "moon-b", 2),
        QrelEntry("2", "doc-owl-1", 1),
        QrelEntry("2", "moon-a", 0),
        QrelEntry("q3", "17-3", 1),
        QrelEntry("q3", "17-1", 1),  # the repeated (q3, 17-3) is counted once
    ]
    assert qrels[4].origin == f"{test}:2"
    assert src.language == "en"


def test_corpus_file_with_query_files(folder: Path) -> None:
    src = read_dapr(folder / "corpus.jsonl", [folder / "train.jsonl"])
    assert [q.id for q in src.queries()] == ["q1", "2"]
    assert len(list(src.passages())) == 8
    other = folder / "questions.jsonl"
    other.write_bytes((folder / "train.jsonl").read_bytes())
    src = read_dapr(folder / "corpus.jsonl", {"dev": other})
    assert {q.split for q in src.queries()} == {"dev"}
    assert [p.id for p in read_dapr(folder / "corpus.jsonl").passages()] == [
        "doc-owl-0",
        "doc-owl-1",
        "17-1",
        "17-2",
        "17-3",
    ]
    assert list(read_dapr(folder / "corpus.jsonl").qrels()) == []


def test_bad_query_file_name(folder: Path) -> None:
    with pytest.raises(FormatError) as info:
        read_dapr(folder / "corpus.jsonl", [folder / "README.md"])
    assert (info.value.path, info.value.line) == (str(folder / "README.md"), None)
    assert "cannot tell the split" in info.value.message


def test_missing_query_file(folder: Path) -> None:
    with pytest.raises(FormatError) as info:
        read_dapr(folder / "corpus.jsonl", [folder / "dev.jsonl"])
    assert (info.value.path, info.value.line, info.value.message) == (str(folder / "dev.jsonl"), None, "file not found")


def test_folder_without_corpus(tmp_path: Path) -> None:
    jsonl(tmp_path / "test.jsonl", [{"query": {"id": 1, "text": "x"}, "judged_chunks": []}])
    with pytest.raises(FormatError) as info:
        read_dapr(tmp_path)
    assert (info.value.path, info.value.line) == (str(tmp_path), None)
    assert "no corpus.jsonl" in info.value.message


def test_unexpected_jsonl_in_folder(folder: Path) -> None:
    jsonl(folder / "validation.jsonl", [])
    with pytest.raises(FormatError) as info:
        read_dapr(folder)
    assert info.value.path == str(folder / "validation.jsonl")
    assert "unexpected JSON-lines file" in info.value.message


def _bad(tmp_path: Path, corpus: list[object], train: list[object], dev: list[object] | None = None):
    jsonl(tmp_path / "corpus.jsonl", corpus)
    if train:
        jsonl(tmp_path / "train.jsonl", train)
    if dev is not None:
        jsonl(tmp_path / "dev.jsonl", dev)
    return read_dapr(tmp_path)


def _q(qid: str, *items: dict, text: str = "a question") -> dict:
    return {"query": {"id": qid, "text": text}, "judged_chunks": list(items)}


MOON_EDITED = {**DOC_MOON, "chunks": DOC_MOON["chunks"][:2]}


@pytest.mark.parametrize(
    ("corpus", "train", "dev", "stream", "file", "line", "phrase"),
    [
        (
            [DOC_OWL],
            [_q("q", {"chunk": {"id": "zzz", "text": "x"}, "judgement": 1, "belonging_doc": DOC_MOON})],
            None,
            "qrels",
            "train.jsonl",
            1,
            "chunk 'zzz' is not among its chunks in belonging_doc 'moon'",
        ),
        (
            [DOC_OWL],
            [_q("q", {"chunk": {"id": "moon-a", "text": "other"}, "judgement": 1, "belonging_doc": DOC_MOON})],
            None,
            "qrels",
            "train.jsonl",
            1,
            "chunk 'moon-a' has a different text there",
        ),
        (
            [DOC_OWL],
            [_q("q", judged(DOC_MOON, 0)), _q("r", judged(MOON_EDITED, 0))],
            None,
            "passages",
            "train.jsonl",
            2,
            "document 'moon' differs from the one given at",
        ),
        (
            [DOC_OWL, MOON_EDITED],
            [_q("q", judged(DOC_MOON, 0))],
            None,
            "passages",
            "corpus.jsonl",
            2,
            "document 'moon' differs from its belonging_doc at",
        ),
        (
            [DOC_OWL],
            [_q("q", {**judged(DOC_OWL, 0), "judgement": "1"})],
            None,
            "qrels",
            "train.jsonl",
            1,
            'judged_chunks[0].judgement must be an integer grade, got "1"',
        ),
        (
            [DOC_OWL],
            [_q("q", {**judged(DOC_OWL, 0), "judgement": 1.5})],
            None,
            "qrels",
            "train.jsonl",
            1,
            "must be an integer grade, got 1.5",
        ),
        (
            [DOC_OWL, DOC_TEA, DOC_OWL],
            [],
            None,
            "passages",
            "corpus.jsonl",
            3,
            "duplicate document id 'doc-owl' (first at line 1)",
        ),
        (
            [{**DOC_OWL, "chunks": [DOC_OWL["chunks"][0], DOC_OWL["chunks"][0]]}],
            [],
            None,
            "passages",
            "corpus.jsonl",
            1,
            "chunk id 'doc-owl-0' appears twice",
        ),
        (
            [DOC_OWL],
            [_q("q", judged(DOC_OWL, 0))],
            [_q("q", judged(DOC_OWL, 1))],
            "queries",
            "dev.jsonl",
            1,
            "already in",
        ),
        (
            [DOC_OWL],
            [_q("q", judged(DOC_OWL, 0)), _q("q", judged(DOC_OWL, 1), text="another text")],
            None,
            "queries",
            "train.jsonl",
            2,
            "query 'q' has a different text",
        ),
        (
            [DOC_OWL],
            [_q("q", judged(DOC_OWL, 0, 1)), _q("q", judged(DOC_OWL, 0, 2))],
            None,
            "qrels",
            "train.jsonl",
            2,
            "judged 2 here and 1 at",
        ),
        ([{"id": "x", "title": "X"}], [], None, "passages", "corpus.jsonl", 1, "document has no 'chunks'"),
        (
            [{"id": "x", "chunks": [{"id": "x-0"}]}],
            [],
            None,
            "passages",
            "corpus.jsonl",
            1,
            "document.chunks[0] has no 'text'",
        ),
        (
            [DOC_OWL],
            [{"query": {"id": "q"}, "judged_chunks": []}],
            None,
            "queries",
            "train.jsonl",
            1,
            "query has no 'text'",
        ),
    ],
)
def test_malformed(
    tmp_path: Path,
    corpus: list[object],
    train: list[object],
    dev: list[object] | None,
    stream: str,
    file: str,
    line: int,
    phrase: str,
) -> None:
    src = _bad(tmp_path, corpus, train, dev)
    with pytest.raises(FormatError) as info:
        list(getattr(src, stream)())
    assert (info.value.path, info.value.line) == (str(tmp_path / file), line)
    assert phrase in info.value.message


def test_truncated_and_empty_files(tmp_path: Path) -> None:
    (tmp_path / "corpus.jsonl").write_text(json.dumps(DOC_OWL) + "\n" + json.dumps(DOC_TEA)[:40] + "\n")
    (tmp_path / "test.jsonl").write_text("")
    src = read_dapr(tmp_path)
    with pytest.raises(FormatError) as info:
        list(src.passages())
    # the query files are read first (belonging documents), so the empty one is reported
    assert (info.value.path, info.value.line) == (str(tmp_path / "test.jsonl"), 1)
    (tmp_path / "test.jsonl").unlink()
    with pytest.raises(FormatError) as info:
        list(read_dapr(tmp_path).passages())
    assert (info.value.path, info.value.line) == (str(tmp_path / "corpus.jsonl"), 2)
    assert "invalid JSON" in info.value.message


SAMPLES = ["ConditionalQA", "Genomics", "MIRACL", "NaturalQuestions"]


@pytest.mark.shared_data
@pytest.mark.parametrize("name", SAMPLES)
def test_dapr_samples(name: str) -> None:
    folder = SHARED / "dapr-sample" / name
    if not folder.is_dir():
        pytest.skip("../shared/data/dapr-sample is absent")
    src = read_dapr(folder)
    passages = {p.id: p for p in src.passages()}

    corpus_docs = [json.loads(line) for line in (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    docs = {str(d["id"]): d for d in corpus_docs}
    judgments: dict[tuple[str, str], int] = {}
    query_ids: dict[str, str] = {}
    for split in ("train", "dev", "test"):
        path = folder / f"{split}.jsonl"
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            query_ids[str(record["query"]["id"])] = split
            for item in record["judged_chunks"]:
                doc = item["belonging_doc"]
                docs.setdefault(str(doc["id"]), doc)
                judgments[(str(record["query"]["id"]), item["chunk"]["id"])] = item["judgement"]
                # every judged chunk is present with its document's id, title and chunk position
                passage = passages[item["chunk"]["id"]]
                assert passage.doc_id == str(doc["id"])
                assert passage.title == doc["title"].strip()
                assert passage.position == [c["id"] for c in doc["chunks"]].index(item["chunk"]["id"])
                assert passage.text == item["chunk"]["text"]
    assert len(passages) == sum(len(d["chunks"]) for d in docs.values())
    assert {p.doc_id for p in passages.values()} == set(docs)
    assert {(q.query_id, q.doc_id): q.grade for q in src.qrels()} == judgments
    assert {q.id: q.split for q in src.queries()} == query_ids
    assert all("\r" not in p.title and p.title == p.title.strip() for p in passages.values())


@pytest.mark.shared_data
def test_genomics_repeated_query() -> None:
    folder = SHARED / "dapr-sample" / "Genomics"
    if not folder.is_dir():
        pytest.skip("../shared/data/dapr-sample is absent")
    src = read_dapr(folder)
    assert [q.id for q in src.queries()] == ["160"]
    assert sorted((q.doc_id, q.grade) for q in src.qrels()) == [
        ("15269389-14", 2),
        ("15722549-10", 1),
        ("15722550-4", 1),
    ]
    assert next(iter(src.passages())).title == "John Snow and Modern-Day Environmental Epidemiology"
