"""trec_eval-exact retrieval measures: a thin layer over pytrec_eval.

pytrec_eval (pytrec-eval-terrier, Van Gysel & de Rijke, SIGIR 2018) runs
``trec_eval``'s own C code and is the engine for every measure it has.  This
module adds what it lacks:

* measures as small declarative objects parsed from strings, in the style of
  ir_measures (MacAvaney, Macdonald & Ounis, ECIR 2022): ``nDCG@10``,
  ``P(rel=2)@10``, ``MRR@10``;
* a per-measure relevance level, with one ``RelevanceEvaluator`` built per
  distinct level;
* three measures trec_eval does not have: ``MRR@k``, ``nDCG_exp@k`` and
  ``Judged@k``;
* ``trec_eval -c`` semantics (queries the run misses score 0) and the mean
  over queries.

Measures
--------
``R`` below is the number of judged documents with grade >= the relevance
level, ``rel_i`` is 1 when the document at rank ``i`` has grade >= the level
(else 0), ``g_i`` its grade (0 when unjudged), and ``rank`` counts from 1 in
trec_eval order (see *Ordering*).

==============  ===========  ===============================================
spelling        trec_eval    definition
==============  ===========  ===============================================
``MAP``         ``map``      (1/R) sum_i rel_i * P@i (0 when R = 0)
``RR``          recip_rank   1 / rank of the first relevant document, or 0
``MRR@k``       --           RR if the first relevant document is at
                             rank <= k, else 0 (also ``RR@k``; ``MRR`` with
                             no cutoff is ``RR``)
``P@k``         ``P.k``      (1/k) sum_{i<=k} rel_i
``R@k``         recall.k     (1/R) sum_{i<=k} rel_i (0 when R = 0)
``Rprec``       ``Rprec``    P@R
``Success@k``   success.k    1 if some rel_i = 1 with i <= k, else 0; also
                             spelt ``Accuracy@k`` (top-k accuracy/hit rate)
``nDCG@k``      ndcg_cut.k   DCG@k / IDCG@k with DCG@k = sum_{i<=k}
                             g_i / log2(i + 1), gain = the grade itself
                             (non-positive grades gain 0); IDCG@k is the
                             DCG@k of the judged documents sorted by grade
``nDCG``        ``ndcg``     the same over the whole ranking
``nDCG_exp@k``  --           as nDCG@k with gain 2^g - 1 (Burges et al.,
                             ICML 2005), non-positive grades gain 0
``Judged@k``    --           (1/k) |{i <= k : document i is in the qrels}|
==============  ===========  ===============================================

nDCG follows Järvelin & Kekäläinen, "Cumulated gain-based evaluation of IR
techniques", ACM TOIS 20(4), 2002, as implemented by trec_eval: the graded
label is the gain *whatever the relevance level* (the level never changes
nDCG, which was checked against pytrec_eval).  ``nDCG_exp`` is computed by
running trec_eval's ``ndcg_cut``/``ndcg`` on qrels whose grades were replaced
by ``2^g - 1``; it refuses grades above :data:`MAX_EXP_GRADE` because
trec_eval's ideal-DCG loop walks every gain value from the largest down.

MRR is Voorhees' reciprocal rank (TREC-8 QA track, 1999) restricted to the top
``k``: ``RR@k = RR`` when ``RR >= 1/k``; the comparison is done on the integer
rank ``round(1/RR)`` so that floating point cannot move a document across the
boundary.

``Judged@k`` (the judgment rate of OpenNIR / ir_measures) counts a document as
judged when it has *any* entry in the qrels for that query, negative grades
included.  Unlike ir_measures it ranks in trec_eval order and always divides
by ``k`` (like ``P@k``), so a run returning fewer than ``k`` documents cannot
reach 1.  It is computed by trec_eval's ``P.k`` on qrels in which every judged
document has grade 1.

Ordering
--------
Exactly trec_eval's: score descending, ties broken by document id descending
in byte order (``strcmp``; for ``str`` this is the same as Python's code point
order).  trec_eval keeps scores as C ``float``, so scores are compared in
*single* precision: two scores that round to the same 32-bit float tie (for
example ``0.1`` and ``0.1 + 1e-9``).  NaN scores have no defined order; keep
them out of runs.

Queries
-------
Only queries with at least one judgment count as "in the qrels" (an empty
judgment dict is ignored, as pytrec_eval does).  By default every such query
is evaluated and one the run lacks scores 0 on every measure (``trec_eval
-c``); with ``intersection=True`` only queries that are also keys of the run
are evaluated.  Run queries without judgments are ignored.  A query whose
judgments are all negative has no relevant document and no positive gain: it
scores 0 on every measure except ``Judged@k``; it is kept away from
trec_eval's nDCG code, which reads stale state and can loop forever on such a
query.  trec_eval serves a query with the id ``"no_query"`` or ``"no query"``
the previous query's cached results; such queries are evaluated under an alias
and reported under their own id.  Ids must not contain NUL characters
(trec_eval sees C strings).

``"all"`` is the arithmetic mean over the evaluated queries (``math.fsum``),
``0.0`` when no query is evaluated; the query id ``"all"`` is therefore
reserved.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pytrec_eval

from core.limits import CUTOFF_MAX, GRADE_BOUND, GRADE_MAX, GRADE_MIN, GRADE_RANGE
from core.memory import check_grade_levels_fit
from core.types import Qrels, Run
from core.validators import int_in_range, is_integer, non_negative_int

__all__ = [
    "DEFAULT_MEASURES",
    "MAX_EXP_GRADE",
    "MEASURE_CHOICES",
    "MEASURE_NAMES",
    "Measure",
    "evaluate",
    "format_json",
    "format_tsv",
    "parse_measure",
]

MAX_EXP_GRADE = 16

DEFAULT_MEASURES: tuple[str, ...] = ("MRR@10", "nDCG@10", "R@100", "MAP", "Judged@10")
"""What is reported unless the user names measures: ``pooljudge eval``, the Metrics page's selection, and
the Error analysis page's first choice.  ``Judged@10`` is there because pooled qrels are incomplete: a run
whose top ten were never judged scores low for want of labels, not of relevance."""
MEASURE_CHOICES: tuple[str, ...] = (*DEFAULT_MEASURES, "P@10", "Success@10", "R@10", "nDCG_exp@10", "RR", "Rprec")
"""The measures the pages offer, the defaults first."""

LARGE_GRADE = 1_000_000
"""Above this grade :func:`evaluate` warns: trec_eval allocates 8 bytes per
grade level up to the largest grade of the qrels (``te_form_res_rels``), so a
grade of 2,000,000,000 costs about 16 GB and over a minute per evaluation."""
"""Largest grade ``nDCG_exp`` accepts (gain ``2^16 - 1``)."""

_FORBIDDEN, _OPTIONAL, _REQUIRED = "forbidden", "optional", "required"


@dataclass(frozen=True)
class _Family:
    name: str  # canonical spelling
    cutoff: str  # _FORBIDDEN / _OPTIONAL / _REQUIRED
    binary: bool  # takes a relevance level (rel >= level is relevant)
    example: str


_FAMILY_LIST = (
    _Family("MAP", _FORBIDDEN, True, "MAP"),
    _Family("RR", _OPTIONAL, True, "RR"),
    _Family("MRR", _OPTIONAL, True, "MRR@10"),
    _Family("P", _REQUIRED, True, "P@10"),
    _Family("R", _REQUIRED, True, "R@100"),
    _Family("Rprec", _FORBIDDEN, True, "Rprec"),
    _Family("Success", _REQUIRED, True, "Success@10"),
    _Family("Accuracy", _REQUIRED, True, "Accuracy@10"),
    _Family("nDCG", _OPTIONAL, False, "nDCG@10"),
    _Family("nDCG_exp", _OPTIONAL, False, "nDCG_exp@10"),
    _Family("Judged", _REQUIRED, False, "Judged@10"),
)
_FAMILIES = {f.name: f for f in _FAMILY_LIST}
_ALIASES = {f.name.lower(): f.name for f in _FAMILY_LIST} | {"ap": "MAP", "recall": "R"}

MEASURE_NAMES: tuple[str, ...] = tuple(f.name for f in _FAMILY_LIST)
"""The canonical measure names, in documentation order."""

_MEASURE_RE = re.compile(
    r"""\A\s*(?P<name>[A-Za-z][A-Za-z0-9_\-]*)\s*
        (?:\(\s*(?P<params>[^()]*?)\s*\)\s*)?
        (?:@\s*(?P<cutoff>[^@]*?)\s*)?\Z""",
    re.VERBOSE,
)
_INT_RE = re.compile(r"[+-]?[0-9]+", re.ASCII)


@dataclass(frozen=True)
class Measure:
    """One evaluation measure, e.g. ``P(rel=2)@10``.

    Build it with :func:`parse_measure` or directly; the constructor checks the
    parameters.

    Parameters
    ----------
    name : str
        Canonical name, one of :data:`MEASURE_NAMES` (``"MAP"``, ``"RR"``,
        ``"MRR"``, ``"P"``, ``"R"``, ``"Rprec"``, ``"Success"``,
        ``"Accuracy"``, ``"nDCG"``, ``"nDCG_exp"``, ``"Judged"``).
    cutoff : int or None
        Rank cutoff ``k`` (a positive integer).  Required by ``P``, ``R``,
        ``Success``/``Accuracy`` and ``Judged``; optional for ``RR``/``MRR``
        and the nDCGs; not accepted by ``MAP`` and ``Rprec``.
    rel : int or None
        Explicit relevance level (``grade >= rel`` is relevant) for the binary
        measures; ``None`` uses the ``level`` given to :func:`evaluate`.  nDCG
        and Judged take no level.

    Raises
    ------
    ValueError
        For an unknown name or a parameter the measure does not take.
    """

    name: str
    cutoff: int | None = None
    rel: int | None = None

    def __post_init__(self) -> None:
        family = _FAMILIES.get(self.name)
        if family is None:
            raise ValueError(f"unknown measure {self.name!r}; known measures: {', '.join(MEASURE_NAMES)}")
        if self.cutoff is not None:
            # trec_eval reads cutoffs as C int: a larger one is not parsed at all
            if not is_integer(self.cutoff) or not 1 <= self.cutoff <= CUTOFF_MAX:
                raise ValueError(
                    f"{self.name}: the cutoff must be a positive integer (at most {CUTOFF_MAX}), got {self.cutoff!r}"
                )
            if family.cutoff == _FORBIDDEN:
                raise ValueError(f"{self.name} takes no cutoff (write {family.example!r})")
        elif family.cutoff == _REQUIRED:
            raise ValueError(f"{self.name} needs a cutoff, e.g. {family.example!r}")
        if self.rel is not None:
            if not family.binary:
                raise ValueError(
                    f"{self.name} takes no relevance level"
                    + (" (nDCG uses the graded label as gain)" if self.name.startswith("nDCG") else "")
                )
            _check_level(self.rel, f"{self.name}: rel")

    def __str__(self) -> str:
        text = self.name
        if self.rel is not None:
            text += f"(rel={self.rel})"
        if self.cutoff is not None:
            text += f"@{self.cutoff}"
        return text


def _check_level(value: object, what: str) -> int:
    # a level is compared with grades, so it lives in the grade range (trec_eval's int)
    return int_in_range(value, what, 1, GRADE_MAX)


def _check_grades(qrels: Qrels) -> None:
    """Refuse grades outside trec_eval's C int, or too large for the memory left; warn above :data:`LARGE_GRADE`.

    Outside the range pytrec_eval truncates silently (``2**32 + 1`` scores as
    ``1``) or fails with a SystemError.  The extremes are found in C first and
    the offending pair is looked up only when one is out of range.
    """
    judged = [docs for docs in qrels.values() if docs]
    try:
        low = min(map(min, map(dict.values, judged)), default=0)
        top = max(map(max, map(dict.values, judged)), default=0)
    except TypeError:  # not all int: pytrec_eval reports the type
        return
    if not (GRADE_MIN <= low and top <= GRADE_MAX):
        for qid, docs in qrels.items():
            for docid, grade in docs.items():
                if isinstance(grade, int) and not GRADE_MIN <= grade <= GRADE_MAX:
                    raise ValueError(f"grade {grade} of query {qid!r}, document {docid!r} is outside {GRADE_RANGE}")
    if top > GRADE_BOUND:
        check_grade_levels_fit(top)  # refused before pytrec_eval allocates it
    if top > LARGE_GRADE:
        warnings.warn(
            f"the largest grade is {top}: trec_eval allocates 8 bytes per grade level, "
            f"about {top * 8 // 2**20} MiB per evaluation; grades above {LARGE_GRADE} are unusual",
            RuntimeWarning,
            stacklevel=3,
        )


def parse_measure(text: str | Measure) -> Measure:
    """Parse a measure spelled ir_measures-style, case-insensitively.

    Grammar: ``NAME [ "(" "rel=" INT ")" ] [ "@" CUTOFF ]``, e.g. ``MAP``,
    ``mrr@10``, ``ndcg@10``, ``nDCG_exp@20``, ``P(rel=2)@10``,
    ``Accuracy@5``.  ``AP`` is accepted for ``MAP`` and ``Recall`` for
    ``R``; ``Accuracy`` stays ``Accuracy`` (it is trec_eval's ``success``,
    reported under the name used).

    Parameters
    ----------
    text : str or Measure
        The spelling (a :class:`Measure` is returned unchanged).

    Returns
    -------
    Measure
        Whose ``str()`` is the canonical spelling.

    Raises
    ------
    ValueError
        For unknown names or parameters and bad cutoffs or levels; the
        message names the offending part.
    """
    if isinstance(text, Measure):
        return text
    if not isinstance(text, str):
        raise TypeError(f"a measure is a str or Measure, got {type(text).__name__}")
    match = _MEASURE_RE.match(text)
    if match is None:
        raise ValueError(f"cannot parse measure {_short(text)!r}; expected e.g. 'nDCG@10', 'P(rel=2)@10', 'MAP'")
    where = f"(in {_short(text)!r})"
    raw_name = match["name"]
    name = _ALIASES.get(raw_name.lower())
    if name is None:
        raise ValueError(f"unknown measure {_short(raw_name)!r} {where}; known measures: {', '.join(MEASURE_NAMES)}")
    rel = None
    params = match["params"]
    if params is not None:
        for item in filter(None, (p.strip() for p in params.split(","))):
            key, sep, value = (s.strip() for s in item.partition("="))
            if not sep or key.lower() != "rel":
                raise ValueError(f"unknown parameter {_short(item)!r} {where}; the only parameter is 'rel=LEVEL'")
            if rel is not None:
                raise ValueError(f"'rel' given twice {where}")
            rel = _c_int(value, f"{name}: rel must be an integer >= 1 (at most {GRADE_MAX})", where)
    cutoff = None
    raw_cutoff = match["cutoff"]
    if raw_cutoff is not None:
        cutoff = _c_int(raw_cutoff, f"{name}: the cutoff must be a positive integer (at most {CUTOFF_MAX})", where)
    try:
        return Measure(name, cutoff, rel)
    except ValueError as exc:
        raise ValueError(f"{exc} {where}") from None


def _short(text: str) -> str:
    """``text`` cut to a length a one-line message can show."""
    return text if len(text) <= 40 else text[:30] + "..."


def _c_int(raw: str, expected: str, where: str) -> int:
    """A cutoff or level spelled in decimal, as trec_eval's C ``int`` reads it.

    The range itself is checked by :class:`Measure`; a number of more digits
    than any C int has is refused here, before ``int()`` would (beyond 4300
    digits Python's own message mentions ``sys.set_int_max_str_digits``).
    """
    if not _INT_RE.fullmatch(raw):
        raise ValueError(f"{expected}, got {_short(raw)!r} {where}")
    digits = raw.lstrip("+-").lstrip("0")
    if len(digits) > 40:
        raise ValueError(f"{expected}, got {raw[:20]}... (a {len(digits)}-digit number) {where}")
    return -int(digits or "0") if raw.startswith("-") else int(digits or "0")


# --------------------------------------------------------------------------
# evaluation plan: which evaluator computes what
# --------------------------------------------------------------------------

_PLAIN, _EXP, _JUDGED = "plain", "exp", "judged"


def _trec_request(m: Measure) -> tuple[str, str]:
    """(measure string for pytrec_eval, key of its value in the output)."""
    name, k = m.name, m.cutoff
    if name == "MAP":
        return "map", "map"
    if name in ("RR", "MRR"):
        return "recip_rank", "recip_rank"
    if name == "Rprec":
        return "Rprec", "Rprec"
    if name == "P" or name == "Judged":
        return f"P.{k}", f"P_{k}"
    if name == "R":
        return f"recall.{k}", f"recall_{k}"
    if name in ("Success", "Accuracy"):
        return f"success.{k}", f"success_{k}"
    # nDCG, nDCG_exp
    if k is None:
        return "ndcg", "ndcg"
    return f"ndcg_cut.{k}", f"ndcg_cut_{k}"


_Key = tuple[str, int]  # (qrels variant, relevance level): one evaluator each


def _plan(measures: Sequence[Measure], level: int) -> tuple[dict[_Key, set[str]], list[tuple[Measure, _Key, str]]]:
    """Group the measures by evaluator: requests per evaluator, and per measure
    the evaluator and the output key holding its value."""
    groups: dict[_Key, set[str]] = {}
    binary_levels: list[int] = []
    for m in measures:
        if _FAMILIES[m.name].binary:
            lv = level if m.rel is None else m.rel
            if lv not in binary_levels:
                binary_levels.append(lv)
    # linear nDCG does not depend on the level: ride on a plain evaluator that
    # exists anyway, preferring the default level's
    ndcg_level = level if (level in binary_levels or not binary_levels) else binary_levels[0]
    # nDCG_exp and Judged need qrels of their own (pytrec_eval refuses
    # relevance level 0, which would let Judged ride on nDCG_exp's qrels)
    tasks = []
    for m in measures:
        if m.name == "nDCG":
            key = (_PLAIN, ndcg_level)
        elif m.name == "nDCG_exp":
            key = (_EXP, 1)
        elif m.name == "Judged":
            key = (_JUDGED, 1)
        else:
            key = (_PLAIN, level if m.rel is None else m.rel)
        request, out_key = _trec_request(m)
        groups.setdefault(key, set()).add(request)
        tasks.append((m, key, out_key))
    return groups, tasks


def _exp_qrels(qrels: Qrels) -> Qrels:
    gains = {g: (1 << g) - 1 for g in range(1, MAX_EXP_GRADE + 1)}
    out: Qrels = {}
    for qid, docs in qrels.items():
        if not docs:
            continue
        top = max(docs.values())
        if top > MAX_EXP_GRADE:
            raise ValueError(
                f"nDCG_exp: query {qid!r} has grade {top}; nDCG_exp accepts grades <= {MAX_EXP_GRADE} (gain 2^g - 1)"
            )
        try:
            out[qid] = {d: gains[g] if g > 0 else 0 for d, g in docs.items()}
        except (KeyError, TypeError) as exc:
            raise TypeError(f"nDCG_exp: grades must be int; query {qid!r} has {exc}") from None
    return out


def _judged_qrels(qrels: Qrels) -> Qrels:
    return {qid: dict.fromkeys(docs, 1) for qid, docs in qrels.items() if docs}


def _plain_qrels(qrels: Qrels) -> Qrels:
    """The qrels without queries whose judgments are all negative.

    For such a query trec_eval's ``ndcg``/``ndcg_cut`` read stale state and can
    loop forever (seen with pytrec-eval-terrier 0.5.x); the query scores 0 on
    every measure anyway.
    """
    try:  # fast path, all in C: every query has a grade >= 0
        if min(map(max, map(dict.values, qrels.values())), default=0) >= 0:
            return qrels
    except ValueError:  # an empty judgment dict
        pass
    return {qid: docs for qid, docs in qrels.items() if docs and max(docs.values()) >= 0}


_CACHE_SENTINELS = ("no_query", "no query")


def _rename_cache_sentinels(qrels: Qrels, run: Run) -> tuple[Qrels, Run, dict[str, str]] | None:
    """Rename query ids that trec_eval mistakes for its empty result cache.

    trec_eval's ``te_form_res_rels`` caches the last query by id and starts
    from (and, in pytrec_eval, is reset to) the ids ``"no query"`` /
    ``"no_query"``: a query with that id is served the previous query's
    results.  Such ids are evaluated under a fresh alias instead.
    """
    present = [qid for qid in _CACHE_SENTINELS if qid in qrels or qid in run]
    if not present:
        return None
    back: dict[str, str] = {}
    for qid in present:
        n = 0
        while (alias := f"{qid}#pooljudge{n}") in qrels or alias in run:
            n += 1
        back[alias] = qid
    forward = {original: alias for alias, original in back.items()}
    qrels = {forward.get(q, q): docs for q, docs in qrels.items()}
    run = {forward.get(q, q): docs for q, docs in run.items()}
    return qrels, run, back


def _run_pytrec_eval(qrels: Qrels, run: Run, request: set[str], level: int) -> dict[str, dict[str, float]]:
    try:
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, request, relevance_level=level)
        return evaluator.evaluate(run)
    except TypeError as exc:
        raise TypeError(
            f"pytrec_eval rejected the qrels or run ({exc}): query and document ids must be str, "
            "grades int and scores Python float/int"
        ) from exc


def evaluate(
    qrels: Qrels,
    run: Run,
    measures: Sequence[Measure | str],
    *,
    level: int = 1,
    intersection: bool = False,
) -> dict[str, dict[str, float]]:
    """Evaluate a run exactly as ``trec_eval -c -q`` would.

    See the module docstring for the measures, the ranking order and the
    query semantics.

    Parameters
    ----------
    qrels : Qrels
        ``{qid: {docid: grade}}`` with int grades.
    run : Run
        ``{qid: {docid: score}}`` with float scores; ranks are derived from
        the scores (trec_eval order), never taken from a rank column.
    measures : sequence of Measure or str
        Measures or their spellings (see :func:`parse_measure`).  Duplicates
        (same canonical spelling) are evaluated once.
    level : int, default 1
        Relevance level of the binary measures that do not give their own
        ``rel``: a document is relevant when ``grade >= level``.  nDCG and
        Judged ignore it.
    intersection : bool, default False
        Evaluate only queries present in both the qrels and the run, instead
        of every judged query with 0 for those the run lacks.

    Returns
    -------
    dict
        ``{str(measure): {qid: value, ..., "all": mean}}`` in the order the
        measures were given; per-query entries are in no particular order and
        ``"all"`` comes last.

    Raises
    ------
    ValueError
        For a bad measure or level, a query id ``"all"``, a grade outside
        :data:`core.limits.GRADE_MIN`..:data:`core.limits.GRADE_MAX` (trec_eval's
        int), one too large for the memory left (:func:`core.memory.check_grade_levels_fit`),
        or a grade above :data:`MAX_EXP_GRADE` with ``nDCG_exp``.
    TypeError
        When ids, grades or scores are not of the expected types.
    """
    level = _check_level(level, "level")
    _check_grades(qrels)
    parsed: dict[str, Measure] = {}  # one per canonical spelling, in the order given
    for item in measures:
        m = parse_measure(item)
        parsed.setdefault(str(m), m)
    if not parsed:
        return {}
    qids = _evaluated_qids(qrels, run, intersection)
    groups, tasks = _plan(list(parsed.values()), level)
    outputs = _evaluate_groups(qrels, run, groups)
    return {str(m): _per_query_values(m, outputs[key], out_key, qids) for m, key, out_key in tasks}


def _evaluated_qids(qrels: Qrels, run: Run, intersection: bool) -> list[str]:
    """The judged queries :func:`evaluate` averages over (with ``intersection``, those the run has too)."""
    qids = [qid for qid, docs in qrels.items() if docs]
    if intersection:
        qids = [qid for qid in qids if qid in run]
    if "all" in qrels and qrels["all"] and (not intersection or "all" in run):
        raise ValueError("query id 'all' is reserved for the mean over queries")
    return qids


def _evaluate_groups(qrels: Qrels, run: Run, groups: dict[_Key, set[str]]) -> dict[_Key, dict[str, dict[str, float]]]:
    """One pytrec_eval pass per (qrels variant, relevance level), keyed by the original query ids.

    Each distinct (relevance level, qrels variant) builds one
    ``pytrec_eval.RelevanceEvaluator``; the measures of the usual set
    (MAP, RR/MRR, P, R, nDCG, Rprec, Success at one level) cost a single
    trec_eval pass, each further relevance level one more.  ``nDCG_exp`` and
    ``Judged`` each add one pass on transformed qrels.
    """
    renamed = _rename_cache_sentinels(qrels, run)
    if renamed is not None:
        qrels, run, back = renamed
    outputs: dict[_Key, dict[str, dict[str, float]]] = {}
    for key, request in groups.items():
        variant, lv = key
        if variant == _PLAIN:
            needs_guard = any(r.startswith("ndcg") for r in request)
            variant_qrels = _plain_qrels(qrels) if needs_guard else qrels
        elif variant == _EXP:
            variant_qrels = _exp_qrels(qrels)
        else:
            variant_qrels = _judged_qrels(qrels)
        outputs[key] = _run_pytrec_eval(variant_qrels, run, request, lv)
    if renamed is not None:  # the callers' qids hold the original ids
        for output in outputs.values():
            for alias, original in back.items():
                if alias in output:
                    output[original] = output.pop(alias)
    return outputs


def _per_query_values(
    m: Measure, output: dict[str, dict[str, float]], out_key: str, qids: list[str]
) -> dict[str, float]:
    """``{qid: value, "all": mean}`` of one measure over the evaluated queries ``qids``."""
    n = len(qids)
    per = {qid: values[out_key] for qid, values in output.items()}
    if m.name in ("RR", "MRR") and m.cutoff is not None:
        k = m.cutoff
        per = {qid: (v if v > 0.0 and round(1.0 / v) <= k else 0.0) for qid, v in per.items()}
    if len(per) != n:  # queries the run lacks (or kept from pytrec_eval) score 0
        for qid in qids:
            if qid not in per:
                per[qid] = 0.0
    per["all"] = math.fsum(per.values()) / n if n else 0.0
    return per


# --------------------------------------------------------------------------
# output
# --------------------------------------------------------------------------

_DIGITS_RE = re.compile(r"([0-9]+)", re.ASCII)


def _natural_key(qid: str) -> tuple[tuple[object, ...], str]:
    parts = _DIGITS_RE.split(qid)
    return tuple(int(p) if i % 2 else p for i, p in enumerate(parts)), qid


def _ordered(per: Mapping[str, float], per_query: bool) -> list[tuple[str, float]]:
    rows: list[tuple[str, float]] = []
    if per_query:
        rows = [(qid, per[qid]) for qid in sorted((q for q in per if q != "all"), key=_natural_key)]
    if "all" in per:
        rows.append(("all", per["all"]))
    return rows


def format_tsv(results: Mapping[str, Mapping[str, float]], *, per_query: bool, digits: int = 4) -> str:
    """Format :func:`evaluate` results as ``trec_eval -q`` style lines.

    Each line is ``measure<TAB>qid<TAB>value`` with ``digits`` decimals.
    Measures keep their order; within a measure the queries are sorted
    naturally (runs of ASCII digits compare as numbers, so ``q2`` precedes
    ``q10``; ties fall back to plain string order) and ``all`` comes last.

    Parameters
    ----------
    results : mapping
        As returned by :func:`evaluate`.
    per_query : bool
        Include one line per query; otherwise only the ``all`` lines.
    digits : int, default 4
        Decimal places (trec_eval prints 4).

    Returns
    -------
    str
        The lines, each ending in a newline (empty for empty results).
    """
    non_negative_int(digits, "digits")
    lines = [
        f"{measure}\t{qid}\t{value:.{digits}f}\n"
        for measure, per in results.items()
        for qid, value in _ordered(per, per_query)
    ]
    return "".join(lines)


def format_json(results: Mapping[str, Mapping[str, float]], per_query: bool) -> str:
    """Format :func:`evaluate` results as JSON.

    The shape is the same with or without ``per_query``: ``{measure: {qid:
    value, ..., "all": mean}}``; without ``per_query`` each measure holds only
    ``"all"``.  Queries are sorted as in :func:`format_tsv`; values are full
    precision.

    Parameters
    ----------
    results : mapping
        As returned by :func:`evaluate`.
    per_query : bool
        Include the per-query values.

    Returns
    -------
    str
        Indented JSON text (non-ASCII ids kept as they are).
    """
    data = {measure: dict(_ordered(per, per_query)) for measure, per in results.items()}
    return json.dumps(data, indent=2, ensure_ascii=False)
