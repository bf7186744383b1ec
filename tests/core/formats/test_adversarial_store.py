"""The adversarial set imported into a store: a refused import leaves every table as it was (issue 10)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.errors import FormatError
from tests.core.formats.adversarial_base import Case, loop, write_case
from tests.core.formats.adversarial_cases_structured import STRUCTURED_CASES
from tests.core.formats.adversarial_cases_tabular import TABULAR_CASES

# one case per reader at least, favouring the kinds that used to get through or crash
STORE_SAMPLE = [
    "trec-qrels: NUL in a document id",
    "trec-qrels: corrupt gzip stream",
    "trec-run: NaN score",
    "msmarco: byte-order mark starting a passage line",
    "msmarco: passage over the text limit",
    "msmarco: query of zero-width spaces",
    "beir: duplicate JSON key",
    "beir: 100,000-deep nested JSON",
    "beir: qrels score beyond C int",
    "dureader: question_id with surrounding spaces",
    "dapr: chunk id with a tab",
    "json-qrels: 100,000-deep nested JSON",
    "smart: query of zero-width spaces",
]


def _counts(store) -> dict[str, int]:
    from sqlalchemy import func, select

    from db.models import (
        Collection,
        ImportRecord,
        PassageRecord,
        QrelsEntry,
        QrelsVersion,
        QueryRecord,
        RunEntryRecord,
        RunRecord,
    )

    tables = (Collection, PassageRecord, QueryRecord, QrelsVersion, QrelsEntry, RunRecord, RunEntryRecord, ImportRecord)
    with store.read() as s:
        return {t.__tablename__: s.scalar(select(func.count()).select_from(t)) for t in tables}


def test_refused_imports_leave_the_store_unchanged(store, tmp_path: Path) -> None:
    from db.importer import import_path

    base = tmp_path / "base"
    write_case(base, Case("baseline", "msmarco", {}, "", 0, ""))
    import_path(store, "msmarco", base, name="base")
    before = _counts(store)
    assert before["passages"] == 2 and before["queries"] == 1 and before["qrels_entries"] == 1
    by_kind = {case.kind: case for case in TABULAR_CASES + STRUCTURED_CASES}
    for number, kind in enumerate(STORE_SAMPLE):
        case = by_kind[kind]
        root = tmp_path / f"case{number}"
        path = write_case(root, case)
        # judgments and runs alone go into the existing collection; whole collections make a new one
        only_judgments = case.format in ("trec-qrels", "trec-run", "json-qrels", "json-run")
        with pytest.raises(FormatError) as info:
            import_path(
                store,
                case.format,
                path,
                name="base" if only_judgments else f"c{number}",
                mode="merge" if only_judgments else "create",
                qrels_name=f"v{number}",
            )
        assert (info.value.path, info.value.line) == (os.fspath(root / case.file), case.line), kind
        assert _counts(store) == before, kind


def test_importing_a_symlink_loop_names_the_loop(store, tmp_path: Path) -> None:
    from db.importer import import_path

    path = tmp_path / "t.qrels"
    loop(path)
    before = _counts(store)
    with pytest.raises(FormatError) as info:
        import_path(store, "trec-qrels", path, name="c")
    assert str(info.value).startswith(f"{path}: symlink loop")
    assert _counts(store) == before
