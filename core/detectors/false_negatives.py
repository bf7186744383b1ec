"""``false_negative``: a top-ranked passage that is unjudged or labelled 0 (DuReader-retrieval).

A passage ranked in the top ``depth`` that is unjudged or labelled 0.  When
the query has reference answers (DuReader, RGB) the passage must also contain
one of them (NFKC, case-insensitive): that is the evidence, and without it
every unjudged top passage of a failing query would be suggested.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from core.detectors.base import Detector, Evidence, Suggestion
from core.prelabel import answer_strings
from core.ranking import rank_positions
from core.text import normalize_with_offsets
from core.types import Qrels, Run
from core.validators import positive_int


@dataclass(frozen=True, slots=True, eq=False)
class FalseNegativeEvidence(Evidence):
    """Evidence of ``false_negative``: the pair's rank, score and label, and the answer it contains (if any)."""

    rank: int | None = None
    score: float | None = None
    label: int | None = None
    answer: str | None = None

    optional = frozenset({"answer"})

    def summary(self) -> str:
        found = f", contains the answer '{self.answer}'" if self.answer else ""
        return f"rank {self.rank}, {'unjudged' if self.label is None else f'label {self.label}'}{found}"


@dataclass(frozen=True, slots=True)
class FalseNegativeCandidate:
    """A top-ranked passage that is unjudged (``label is None``) or labelled 0."""

    query_id: str
    doc_id: str
    rank: int
    score: float
    label: int | None


def false_negative_candidates(run: Run, qrels: Qrels, *, depth: int = 10) -> list[FalseNegativeCandidate]:
    """Passages in the top ``depth`` of a run that are unjudged or labelled 0 (DuReader-retrieval Table 10).

    Ranking follows trec_eval (:mod:`core.ranking`): score descending, compared
    as 32-bit floats, ties by doc id descending, so a rank here is the rank the
    measures count.

    Parameters
    ----------
    run : Run
        ``{query_id: {doc_id: score}}``.
    qrels : Qrels
        ``{query_id: {doc_id: grade}}``.
    depth : int, optional
        How many top passages per query to inspect (default 10).

    Returns
    -------
    list of FalseNegativeCandidate
        By query id then rank.

    Raises
    ------
    ValueError
        If ``depth < 1``.
    TypeError
        If ``run`` or ``qrels`` is not a mapping of mappings.
    """
    positive_int(depth, "depth")
    if not isinstance(run, Mapping) or not isinstance(qrels, Mapping):
        raise TypeError("run and qrels must be mappings")
    out: list[FalseNegativeCandidate] = []
    for qid in sorted(run):
        docs = run[qid]
        if not isinstance(docs, Mapping):
            raise TypeError(f"run[{qid!r}] must be a mapping of doc id to score")
        judged = qrels.get(qid, {})
        for doc, rank in rank_positions(docs, depth).items():
            label = judged.get(doc)
            if label is None or label == 0:
                out.append(FalseNegativeCandidate(qid, doc, rank, float(docs[doc]), label))
    return out


def detect_false_negative(
    *,
    label: int | None,
    rank: int | None = None,
    score: float | None = None,
    depth: int = 10,
    answers: Any = None,
    passage: str | None = None,
) -> list[Suggestion]:
    """The pair-level form of :func:`false_negative_candidates`: ranked in the top ``depth``, label 0 or none.

    With reference ``answers`` (a string, or a list of strings or of lists of
    alternative strings, as :func:`core.prelabel.answer_strings` reads them)
    and the ``passage`` text, the pair is a candidate only when the passage
    contains an answer; the evidence then holds ``"answer"`` and the spans
    mark it.
    """
    if rank is None or rank < 1 or rank > depth:
        return []
    if label is not None and label != 0:
        return []
    evidence = FalseNegativeEvidence(rank, score, label)
    wanted = answer_strings(answers)
    if not wanted or passage is None:
        return [Suggestion("false_negative", evidence, [])]
    normalised, starts, ends = normalize_with_offsets(passage)
    folded = normalised.casefold()
    if len(folded) != len(normalised):  # casefold changed lengths (e.g. "ß"): keep offsets by lowering only
        folded = normalised.lower() if len(normalised.lower()) == len(normalised) else normalised
    for answer in wanted:
        needle = normalize_with_offsets(answer)[0].casefold().strip()
        at = folded.find(needle) if needle else -1
        if at >= 0:
            end = at + len(needle)
            span = (at, end) if starts is None or ends is None else (starts[at], ends[end - 1])
            return [Suggestion("false_negative", replace(evidence, answer=answer), [span])]
    return []


DETECTOR = Detector(
    "false_negatives",
    "false_negative",
    ("label", "rank", "score", "depth", "answers", "passage"),
    ("rank",),
    lambda pair: detect_false_negative(
        label=pair.label, rank=pair.rank, score=pair.score, depth=pair.depth, answers=pair.answers, passage=pair.passage
    ),
    FalseNegativeEvidence,
)
