"""Strict streaming readers and writers for IR collection formats.

:data:`FORMATS` maps a format name (as given to ``pooljudge import --format``)
to the reader that turns a path into a :class:`core.types.CollectionSource`.
Readers are imported lazily so that asking for one format does not load them
all.

Every reader refuses bad input with a :class:`core.errors.FormatError` naming
``file:line``, by the same rules: lines and encodings
(:func:`core.formats._io.iter_lines`: strict UTF-8, a byte-order mark only at
the start of the file, corrupt gzip), JSON (:func:`core.formats._io.load_json`:
no repeated keys, no NaN, no nesting too deep to parse), ids
(:func:`core.formats._rows.check_id`: no control characters, no surrounding
whitespace, at most :data:`core.limits.ID_MAX_CHARS` characters) and texts
(:func:`core.formats._rows.check_text`: the passage and query length limits
of :mod:`core.limits`, no NUL, no query that shows nothing).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass

from core.types import CollectionSource


@dataclass(frozen=True)
class FormatSpec:
    name: str
    module: str
    function: str
    help: str


FORMATS: dict[str, FormatSpec] = {
    spec.name: spec
    for spec in (
        FormatSpec(
            "beir",
            "core.formats.beir",
            "read_beir",
            "BEIR folder: corpus.jsonl, queries.jsonl, qrels/*.tsv (+ pooljudge extras, runs/*.trec)",
        ),
        FormatSpec("trec-qrels", "core.formats.trec", "read_trec_qrels", "TREC qrels file: qid iter docid grade"),
        FormatSpec("trec-run", "core.formats.trec", "read_trec_run", "TREC run file: qid Q0 docid rank score tag"),
        FormatSpec(
            "msmarco",
            "core.formats.msmarco",
            "read_msmarco",
            "MS MARCO TSV folder or file: collection.tsv, queries.*.tsv, qrels*.tsv",
        ),
        FormatSpec(
            "t2ranking",
            "core.formats.msmarco",
            "read_t2ranking",
            "T2Ranking TSV folder: collection.tsv, queries.*.tsv, qrels.*.tsv (4-level labels)",
        ),
        FormatSpec(
            "dureader",
            "core.formats.dureader",
            "read_dureader",
            "DuReader 2.0 MRC JSON lines; paragraphs joined until a passage exceeds 256 chars (DuReader-retrieval)",
        ),
        FormatSpec(
            "dapr",
            "core.formats.dapr",
            "read_dapr",
            "DAPR JSONL folder: corpus.jsonl with ordered chunks, {train,dev,test}.jsonl judged chunks",
        ),
        FormatSpec(
            "smart",
            "core.formats.smart",
            "read_smart_folder",
            "SMART collection folder (Cranfield/CISI): .I .T .A .B .W records and a qrels file",
        ),
        FormatSpec(
            "qa-jsonl",
            "core.formats.qa_jsonl",
            "read_qa_jsonl",
            "query + candidate passages JSONL (RGB refine, fact and int files): "
            "{id, query, answer, positive:[...], negative:[...], positive_wrong:[...]}",
        ),
        FormatSpec(
            "lecard",
            "core.formats.jsonmaps",
            "read_lecard",
            "LeCaRD folder: query.json, label_top30_dict.json, prediction/*.json",
        ),
        FormatSpec("json-qrels", "core.formats.jsonmaps", "read_json_qrels", "JSON qrels {qid: {docid: grade}}"),
        FormatSpec(
            "json-run",
            "core.formats.jsonmaps",
            "read_json_ranked_run",
            "JSON ranked lists {qid: [docid, ...]} (rank-derived scores)",
        ),
    )
}


def read_source(format: str, path: str | os.PathLike[str], *, merge: bool = False) -> CollectionSource:
    """Open ``path`` with the reader registered for ``format``.

    ``merge``: the source is added to a stored collection, so a BEIR folder's ``corpus.jsonl`` may be absent
    or empty (a merge that only adds queries; :func:`core.formats.beir.read_beir`).
    """
    spec = FORMATS.get(format)
    if spec is None:
        raise ValueError(f"unknown format {format!r}; known formats: {', '.join(sorted(FORMATS))}")
    reader: Callable[..., CollectionSource] = getattr(importlib.import_module(spec.module), spec.function)
    if merge and spec.function == "read_beir":
        return reader(path, corpus_optional=True)
    return reader(path)
