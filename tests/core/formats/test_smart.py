"""Tests for core.formats.smart (Cranfield / CISI SMART collections)."""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import pytest

from core.errors import FormatError
from core.formats.smart import CRANFIELD_GRADE_MAP, iter_smart_records, read_smart, read_smart_folder
from core.types import Passage, QrelEntry, Query

SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "data"

DOCS = """\
.I 1
.T
experimental investigation of the aerodynamics of a
wing in a slipstream .
.A
brenckman,m.
.B
j. ae. scs. 25, 1958, 324.
.W
experimental investigation of the aerodynamics of a
wing in a slipstream .
  an experimental study of a wing in a propeller slipstream was
made in order to determine the spanwise distribution of the lift .
.I 2
.T
simple shear flow past a flat plate in an incompressible fluid of small
viscosity .
.A
ting-yili
.B
department of aeronautical engineering, rensselaer polytechnic
institute, troy, n.y.
.W
simple shear flow past a flat plate in an incompressible fluid of small
viscosity .
in the study of high-speed viscous flow past a two-dimensional body .
.I 3
.T
.A
.B
.W
.I
"""

QUERIES_CRLF = (
    ".I 001\r\n.W\r\nwhat similarity laws must be obeyed when constructing aeroelastic models\r\n"
    "of heated high speed aircraft .\r\n"
    ".I 004\r\n.W\r\nwhat problems of heat conduction in composite slabs have been solved so\r\nfar .\r\n"
    ".I\r\n"
)

QRELS = "1 2 2\n1 1 4\n2 1 1\n2 3 3\n"

TEXT_1 = (
    "experimental investigation of the aerodynamics of a\nwing in a slipstream .\n"
    "  an experimental study of a wing in a propeller slipstream was\n"
    "made in order to determine the spanwise distribution of the lift ."
)
TEXT_2 = (
    "simple shear flow past a flat plate in an incompressible fluid of small\nviscosity .\n"
    "in the study of high-speed viscous flow past a two-dimensional body ."
)


@pytest.fixture()
def cran(tmp_path: Path) -> Path:
    (tmp_path / "cran.all.1400").write_text(DOCS)
    (tmp_path / "cran.qry").write_bytes(QUERIES_CRLF.encode())
    (tmp_path / "cranqrel").write_text(QRELS)
    return tmp_path


def test_cranfield_style(cran: Path) -> None:
    src = read_smart(cran / "cran.all.1400", cran / "cran.qry", cran / "cranqrel")
    docs, qry, rel = (str(cran / n) for n in ("cran.all.1400", "cran.qry", "cranqrel"))
    passages = list(src.passages())
    assert passages == [
        Passage(
            "1", TEXT_1, "experimental investigation of the aerodynamics of a wing in a slipstream .", language="en"
        ),
        Passage(
            "2",
            TEXT_2,
            "simple shear flow past a flat plate in an incompressible fluid of small viscosity .",
            language="en",
        ),
        Passage("3", "", "", language="en"),  # a wholly empty record, like Cranfield 471 and 995
    ]
    assert [p.origin for p in passages] == [f"{docs}:1", f"{docs}:14", f"{docs}:27"]
    assert all(p.doc_id is None and p.position is None for p in passages)

    queries = list(src.queries())
    assert queries == [
        Query(
            "1",
            "what similarity laws must be obeyed when constructing aeroelastic models\nof heated high speed aircraft .",
            language="en",
        ),
        Query("2", "what problems of heat conduction in composite slabs have been solved so\nfar .", language="en"),
    ]
    assert [q.origin for q in queries] == [f"{qry}:1", f"{qry}:5"]

    qrels = list(src.qrels())
    assert qrels == [QrelEntry("1", "2", 2), QrelEntry("1", "1", 1), QrelEntry("2", "1", 3), QrelEntry("2", "3", 1)]
    assert qrels[3].origin == f"{rel}:4"
    assert src.language == "en"


def test_query_ids_field(cran: Path) -> None:
    src = read_smart(cran / "cran.all.1400", cran / "cran.qry", query_ids="field")
    assert [q.id for q in src.queries()] == ["001", "004"]
    assert list(src.qrels()) == []
    with pytest.raises(ValueError, match="query_ids"):
        read_smart(cran / "cran.all.1400", query_ids="number")  # type: ignore[arg-type]


def test_grade_map(cran: Path) -> None:
    assert dict(CRANFIELD_GRADE_MAP) == {1: 3, 2: 2, 3: 1, 4: 1, 5: 0}
    src = read_smart(cran / "cran.all.1400", qrels_path=cran / "cranqrel", grade_map={1: 3, 2: 2, 3: 1, 4: 0})
    assert [q.grade for q in src.qrels()] == [2, 0, 3, 1]


def test_folder_and_gzip(cran: Path) -> None:
    expected = read_smart(cran / "cran.all.1400", cran / "cran.qry", cran / "cranqrel")
    passages, queries = list(expected.passages()), list(expected.queries())
    src = read_smart_folder(cran)
    assert list(src.passages()) == passages
    assert list(src.queries()) == queries
    assert list(src.qrels()) == list(expected.qrels())
    for name in ("cran.all.1400", "cran.qry"):
        path = cran / name
        (cran / f"{name}.gz").write_bytes(gzip.compress(path.read_bytes()))
        path.unlink()
    src = read_smart_folder(cran)
    assert list(src.passages()) == passages
    assert list(src.queries()) == queries
    assert [p.origin for p in src.passages()][0] == f"{cran / 'cran.all.1400.gz'}:1"


def test_cisi_style(tmp_path: Path) -> None:
    (tmp_path / "CISI.ALL").write_text(
        ".I 1\n.T\n18 Editions of the Dewey Decimal Classifications\n.A\nComaromi, J.P.\n.A\nSatija, M.P.\n"
        ".W\n   The present study is a history of the DEWEY Decimal\nClassification.\n"
        ".X\n1\t5\t1\n92\t1\t1\n"
        ".I 2\n.T\nUse Made of Technical Libraries\n.A\nSlater, M.\n.W\nThis report is an analysis of 6300 acts of use\n"
        ".X\n2\t5\t2\n"
    )
    (tmp_path / "CISI.QRY").write_text(
        ".I 1\n.W\nWhat problems and concerns are there in making up descriptive titles?\n"
        ".I 2\n.T\nLibraries\n.A\nSomeone\n.W\nHow can actually pertinent data be retrieved?\n.B\n1970\n"
    )
    (tmp_path / "CISI.REL").write_text(
        "     1     28\t0\t0.000000\n     1     2 \t0\t0.000000\n     2     1\t0\t0.000000\n"
    )
    src = read_smart_folder(tmp_path)
    passages = list(src.passages())
    assert [(p.id, p.title, p.text) for p in passages] == [
        (
            "1",
            "18 Editions of the Dewey Decimal Classifications",
            "The present study is a history of the DEWEY Decimal\nClassification.",
        ),
        ("2", "Use Made of Technical Libraries", "This report is an analysis of 6300 acts of use"),
    ]
    assert [(q.id, q.text) for q in src.queries()] == [
        ("1", "What problems and concerns are there in making up descriptive titles?"),
        ("2", "How can actually pertinent data be retrieved?"),
    ]
    assert list(src.qrels()) == [QrelEntry("1", "28", 2), QrelEntry("1", "2", 2), QrelEntry("2", "1", 2)]
    src = read_smart(tmp_path / "CISI.ALL", qrels_path=tmp_path / "CISI.REL", listed_grade=1)
    assert {q.grade for q in src.qrels()} == {1}
    # repeated .A per author is refused in strict mode
    with pytest.raises(FormatError) as info:
        list(iter_smart_records(tmp_path / "CISI.ALL", repeated_fields="error"))
    assert (info.value.line, info.value.message) == (6, "field '.A' repeated in record '1'")


def test_trec_shape_qrels(cran: Path) -> None:
    (cran / "qrels.trec").write_text("1 0 2 3\n1 0 1 0\n")
    src = read_smart(cran / "cran.all.1400", qrels_path=cran / "qrels.trec")
    assert list(src.qrels()) == [QrelEntry("1", "2", 3), QrelEntry("1", "1", 0)]


def _fail(stream, path: Path, line: int | None, phrase: str) -> None:
    with pytest.raises(FormatError) as info:
        list(stream())
    assert (info.value.path, info.value.line) == (str(path), line)
    assert phrase in info.value.message


@pytest.mark.parametrize(
    ("text", "line", "phrase"),
    [
        (".I 1\n.T\na title\n.A\nsomeone\n.I 2\n.W\ntext\n", 1, "record '1' has no .W field"),
        (".I 1\n.T\na title\n.W\n\n.I 2\n.W\ntext\n", 1, "record '1' has an empty .W field"),
        (".I 1\n.W\ntext\n.Z\nzzz\n", 4, "unknown SMART field marker '.Z'"),
        (".I 1\n.W\ntext\n.I\n.I 2\n.W\nmore\n", 4, "'.I' without a record id"),
        (".I 1\n.W\ntext\n.I\n.W\nmore\n", 4, "'.I' without a record id"),
        (".I 1\n.W\ntext\n.I 2\n.W\nmore\n.I 1\n.W\nagain\n", 7, "duplicate record id '1' (first at line 1)"),
        ("preamble\n.I 1\n.W\ntext\n", 1, "expected '.I <id>' to start a record"),
        (".I 1\nstray text\n.W\ntext\n", 2, "before any field marker"),
        (".I 1\n.T a title on the marker line\n.W\ntext\n", 2, "field marker '.T' must be alone on its line"),
        (".I 1 2\n.W\ntext\n", 1, "expected '.I <id>' with one id"),
        (".W\ntext\n", 1, "field marker '.W' before any '.I <id>'"),
        ("\n\n.I\n", 1, "no SMART records"),
        ("", 1, "file is empty"),
    ],
)
def test_malformed_records(tmp_path: Path, text: str, line: int, phrase: str) -> None:
    path = tmp_path / "docs.all"
    path.write_text(text)
    _fail(read_smart(path).passages, path, line, phrase)


def test_empty_query_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "docs").write_text(".I 1\n.W\ntext\n")
    path = tmp_path / "queries"
    path.write_text(".I 1\n.W\nquery one\n.I 2\n.W\n.I 3\n.W\nquery three\n")
    _fail(read_smart(tmp_path / "docs", path).queries, path, 4, "record '2' has an empty .W field, expected text")


def test_bad_utf8(tmp_path: Path) -> None:
    path = tmp_path / "docs"
    path.write_bytes(b".I 1\n.W\ncaf\xe9 au lait\n")
    _fail(read_smart(path).passages, path, 3, "invalid UTF-8")


@pytest.mark.parametrize(
    ("text", "line", "phrase"),
    [
        ("1 2 2\n1 3 x\n", 2, "relevance grade must be an integer, got 'x'"),
        ("1 2 2\n1 3 2.0\n", 2, "relevance grade must be an integer, got '2.0'"),
        ("1 2 7\n", 1, "relevance grade 7 is not in the grade mapping (known: 1, 2, 3, 4, 5)"),
        ("1 2 2\n1 3 1\n1 2 3\n", 3, "duplicate judgment for query '1', document '2' (first at line 1)"),
        ("1 2 2\n1 0 3 2\n", 2, "expected 3 columns 'qid docid grade' (the shape of line 1), got 4 columns"),
        ("1 2\n", 1, "cannot tell the qrels shape from 2 columns"),
        ("1 28 0 0.000000\n1 29 1 0.000000\n", 2, "expected the CISI placeholders '0 0.000000'"),
        ("1 28 0 0.000000\n1 29 0 zero\n", 2, "fourth column must be a number, got 'zero'"),
        ("", 1, "file is empty"),
        ("\n  \n", 1, "no judgments"),
    ],
)
def test_malformed_qrels(tmp_path: Path, text: str, line: int, phrase: str) -> None:
    (tmp_path / "docs").write_text(".I 1\n.W\ntext\n")
    path = tmp_path / "qrels"
    path.write_text(text)
    _fail(read_smart(tmp_path / "docs", qrels_path=path).qrels, path, line, phrase)


def test_forced_qrels_format(tmp_path: Path) -> None:
    (tmp_path / "docs").write_text(".I 1\n.W\ntext\n")
    path = tmp_path / "qrels"
    path.write_text("1 2 2\n")
    _fail(
        read_smart(tmp_path / "docs", qrels_path=path, qrels_format="cisi").qrels,
        path,
        1,
        "expected 4 columns 'qid docid 0 0.000000', got 3",
    )


def test_missing_files(tmp_path: Path) -> None:
    (tmp_path / "docs").write_text(".I 1\n.W\ntext\n")
    with pytest.raises(FormatError) as info:
        read_smart(tmp_path / "docs", tmp_path / "cran.qry")
    assert (info.value.path, info.value.line, info.value.message) == (
        str(tmp_path / "cran.qry"),
        None,
        "file not found",
    )
    with pytest.raises(FormatError) as info:
        read_smart_folder(tmp_path)
    assert (info.value.path, info.value.line) == (str(tmp_path), None)
    assert "expected cran.all.1400 (Cranfield) or CISI.ALL (CISI)" in info.value.message
    with pytest.raises(FormatError) as info:
        read_smart_folder(tmp_path / "absent")
    assert info.value.message == "folder not found"


@pytest.mark.shared_data
def test_cranfield_real() -> None:
    folder = SHARED / "cranfield"
    if not folder.is_dir():
        pytest.skip("../shared/data/cranfield is absent")
    src = read_smart_folder(folder)
    passages = list(src.passages())
    queries = list(src.queries())
    qrels = list(src.qrels())
    assert (len(passages), len(queries), len(qrels)) == (1400, 225, 1837)
    assert [p.id for p in passages] == [str(i) for i in range(1, 1401)]
    assert [q.id for q in queries] == [str(i) for i in range(1, 226)]
    # the .I numbers of cran.qry are not the qrel ids: 001, 002, 004, 008, ...
    assert [q.id for q in read_smart_folder(folder, query_ids="field").queries()][:4] == ["001", "002", "004", "008"]
    assert queries[-1].text == "what design factors can be used to control lift-drag ratios at mach\nnumbers above 5 ."
    assert "\r" not in "".join(q.text for q in queries)
    # Cleverdon codes 1/2/3/4 = 353/387/734/363 lines -> grades 3/2/1/1
    raw = Counter(line.split()[2] for line in (folder / "cranqrel").read_text().splitlines() if line.strip())
    assert raw == {"1": 353, "2": 387, "3": 734, "4": 363}
    assert Counter(q.grade for q in qrels) == {3: 353, 2: 387, 1: 734 + 363}
    assert {q.query_id for q in qrels} == {q.id for q in queries}
    assert {q.doc_id for q in qrels} <= {p.id for p in passages}
    by_id = {p.id: p for p in passages}
    assert by_id["995"].text == "" and by_id["471"].text == ""  # empty placeholder records
    assert QrelEntry("125", "995", 1) in qrels
    assert by_id["1"].title == "experimental investigation of the aerodynamics of a wing in a slipstream ."
    assert "compressor operation with one or more blade rows stalled ." in by_id["578"].text  # second .W block
    with pytest.raises(FormatError) as info:
        list(read_smart(folder / "cran.all.1400", repeated_fields="error").passages())
    assert info.value.message == "field '.A' repeated in record '240'"
