r"""Distant-supervision pre-labels from reference answers (DuReader-retrieval, Algorithm 1).

When a query comes with reference answers, a passage is a *candidate
positive* if some contiguous span of it matches one of the answers well:
its span-level F1 reaches 0.5.  Text is compared as a bag of units,

* characters for Chinese (``level="char"``): every character except
  whitespace and punctuation (Unicode categories ``Z*``, ``P*`` and control
  characters), Latin letters lowercased;
* lowercased words for English (``level="token"``): maximal runs of letters
  and digits (``[^\W_]+``), so punctuation and underscores separate words.

For a span :math:`S` of the passage and an answer :math:`A`, with
:math:`o = |S \cap A|` the multiset overlap (SQuAD-style),

.. math::

    P = \frac{o}{|S|}, \quad R = \frac{o}{|A|}, \quad
    F_1 = \frac{2PR}{P + R} = \frac{2o}{|S| + |A|}.

These are pre-labels to help annotators and to seed training data; they
are stored as such and never as human judgments.

References
----------
.. [1] Y. Qiu et al., "DuReader-retrieval: A large-scale Chinese benchmark
   for passage retrieval from web search engine", EMNLP 2022 (Algorithm 1:
   span-level F1 >= 0.5 against the answers marks a passage positive).
.. [2] P. Rajpurkar et al., "SQuAD: 100,000+ questions for machine
   comprehension of text", EMNLP 2016 (bag-of-tokens F1).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, NamedTuple

from core.lang import detect_language
from core.validators import real_number

__all__ = ["PreLabel", "answer_strings", "max_span_f1", "prelabel", "units"]

Level = Literal["char", "token"]

_WORD = re.compile(r"[^\W_]+")


def units(text: str, level: Level = "char") -> list[str]:
    """The units a text is compared by: characters (``"char"``) or lowercased words (``"token"``).

    Parameters
    ----------
    text : str
        Any text.
    level : {"char", "token"}
        ``"char"``: every character that is not whitespace, punctuation or a
        control character, lowercased (Chinese).  ``"token"``: maximal runs
        of letters and digits, lowercased (English).

    Returns
    -------
    list of str
        The units in text order.
    """
    if level == "char":
        return [c for c in text.lower() if unicodedata.category(c)[0] not in "ZPC"]
    if level == "token":
        return _WORD.findall(text.lower())
    raise ValueError(f"level must be 'char' or 'token', got {level!r}")


def _check_min_f1(min_f1: float) -> None:
    real_number(min_f1, "min_f1", low=0, high=1)


def _max_span_f1_units(passage: Sequence[str], answer: Sequence[str], min_f1: float = 0.0) -> float:
    m = len(answer)
    if m == 0 or not passage:
        return 0.0
    need = Counter(answer)
    # Only spans that start and end on a unit of the answer can be best:
    # trimming an unmatched unit off either end shortens the span without
    # losing overlap, which raises F1 = 2o / (|S| + m).
    hits = [i for i, u in enumerate(passage) if u in need]
    if not hits:
        return 0.0
    # Length bound: o <= m, so F1 <= 2m / (L + m); F1 >= f needs L <= (2/f - 1) m.
    # With min_f1 = 0.5 no span longer than 3m can qualify.
    best = 0.0
    n_hits = len(hits)
    for a in range(n_hits):
        start = hits[a]
        remaining = dict(need)
        overlap = 0
        for b in range(a, n_hits):
            end = hits[b]
            length = end - start + 1
            # Pruning: a span of this length can reach at most 2m / (length + m);
            # if that cannot beat `best` (nor reach min_f1) no longer span from `start` can.
            bound = 2 * m / (length + m)
            if bound < min_f1 or bound <= best:
                break
            unit = passage[end]
            if remaining[unit] > 0:
                remaining[unit] -= 1
                overlap += 1
                f1 = 2 * overlap / (length + m)
                if f1 > best:
                    best = f1
                    if overlap == m and length == m:
                        return 1.0
    return best


def max_span_f1(passage: str, answer: str, *, level: Level = "char", min_f1: float = 0.0) -> float:
    r"""Best F1 of any contiguous span of ``passage`` against ``answer``.

    .. math::

        \max_{i \le j} F_1(\text{passage}[i..j], \text{answer}),
        \qquad F_1 = \frac{2o}{|S| + |A|}

    over units (see :func:`units`).  Computed exactly without looking at all
    :math:`O(n^2)` spans:

    * the best span starts and ends on a unit that occurs in the answer
      (dropping an unmatched end unit shortens the span, keeps the overlap
      and so raises F1), so only the ``h`` positions holding answer units
      are tried as ends: :math:`O(h^2)` at worst, and ``h`` is small
      (often 0) for a short answer;
    * since :math:`o \le |A|`, a span of length ``L`` has
      :math:`F_1 \le 2|A| / (L + |A|)`; extending a span stops as soon as
      that bound cannot beat the best F1 found so far.  In particular a span
      longer than :math:`3|A|` cannot reach 0.5 (:math:`2|A|/(3|A|+|A|) =
      0.5` at exactly :math:`3|A|`).

    Parameters
    ----------
    passage : str
        The passage.
    answer : str
        One answer string.
    level : {"char", "token"}
        Character units (Chinese) or lowercased word units (English).
    min_f1 : float
        Spans that cannot reach this F1 are not tried: only lengths
        :math:`L \le (2/f - 1)|A|` (``3|A|`` for 0.5).  The result is exact
        whenever it is ``>= min_f1``; below that it is the best among the
        shorter spans, still a lower bound and still ``< min_f1``, so a
        threshold decision is unchanged.  Default 0: exact.

    Returns
    -------
    float
        In ``[0, 1]``; 0.0 when the answer or passage has no units.
    """
    _check_min_f1(min_f1)
    return _max_span_f1_units(units(passage, level), units(answer, level), min_f1)


def answer_strings(answers: Any) -> list[str]:
    """Flatten answers to a list of strings, in order, without repeats.

    Accepts ``None``, one string, or a list whose elements are strings or
    lists of alternative strings (RGB's ``[["1313851", "131万"], "上海"]``).
    Blank strings are dropped.

    Raises
    ------
    TypeError
        On anything else (a number, a dict).
    """
    if answers is None:
        return []
    if isinstance(answers, str):
        answers = [answers]
    if not isinstance(answers, (list, tuple)):
        raise TypeError(
            f"answers must be a string or a list of strings / lists of strings, got {type(answers).__name__}"
        )
    flat: list[str] = []
    for item in answers:
        alternatives = [item] if isinstance(item, str) else item
        if not isinstance(alternatives, (list, tuple)) or not all(isinstance(a, str) for a in alternatives):
            raise TypeError(f"an answer must be a string or a list of alternative strings, got {item!r}")
        flat.extend(a for a in alternatives if a.strip())
    return list(dict.fromkeys(flat))


class PreLabel(NamedTuple):
    """A candidate positive: the passage, its best span F1 and the answer string that gave it."""

    doc_id: str
    f1: float
    answer: str


def _passage_items(passages: Mapping[str, str] | Iterable[Any]) -> Iterable[tuple[str, str]]:
    if isinstance(passages, Mapping):
        return ((str(k), v) for k, v in passages.items())

    def items() -> Iterable[tuple[str, str]]:
        for p in passages:
            if isinstance(p, tuple) and len(p) == 2:
                yield str(p[0]), p[1]
            elif hasattr(p, "id") and hasattr(p, "text"):
                yield str(p.id), p.text
            else:
                raise TypeError(f"a passage must be (doc_id, text) or have .id and .text, got {p!r}")

    return items()


def prelabel(
    query_answers: Any,
    passages: Mapping[str, str] | Iterable[Any],
    *,
    threshold: float = 0.5,
    level: Level | None = None,
) -> list[PreLabel]:
    """Candidate positives of one query: passages with a span reaching F1 ``threshold`` against an answer.

    Parameters
    ----------
    query_answers : str, list or None
        The query's answers: a string, or a list whose elements are strings
        or lists of alternative strings (see :func:`answer_strings`).  A
        passage qualifies by matching *any* of them.  ``None`` or no
        answers gives no candidates.
    passages : Mapping[str, str] or iterable
        ``{doc_id: text}``, ``(doc_id, text)`` pairs, or objects with ``.id``
        and ``.text`` (:class:`core.types.Passage`).
    threshold : float
        Minimum best-span F1 (DuReader-retrieval: 0.5); inclusive, so a
        span with F1 exactly 0.5 qualifies.
    level : {"char", "token"}, optional
        Unit of comparison.  Default: per passage, ``"char"`` when the
        passage is Chinese (:func:`core.lang.detect_language`), else
        ``"token"``.

    Returns
    -------
    list of PreLabel
        ``(doc_id, best_f1, answer)`` for every candidate, where ``answer``
        is the answer string with the highest F1 (the first given on a
        tie); sorted by F1 descending, then doc id descending.
    """
    real_number(threshold, "threshold", low=0, high=1, low_open=True)
    if level is not None and level not in ("char", "token"):
        raise ValueError(f"level must be 'char', 'token' or None, got {level!r}")
    answers = answer_strings(query_answers)
    if not answers:
        return []
    answer_units: dict[str, dict[str, list[str]]] = {"char": {}, "token": {}}
    found: list[PreLabel] = []
    for doc_id, text in _passage_items(passages):
        if not isinstance(text, str):
            raise TypeError(f"passage {doc_id!r}: text must be a string, got {type(text).__name__}")
        lvl: Level = level or ("char" if detect_language(text) == "zh" else "token")
        cache = answer_units[lvl]
        passage_units = units(text, lvl)
        best, best_answer = 0.0, ""
        for answer in answers:
            if answer not in cache:
                cache[answer] = units(answer, lvl)
            f1 = _max_span_f1_units(passage_units, cache[answer], threshold)
            if f1 > best:
                best, best_answer = f1, answer
        if best >= threshold:
            found.append(PreLabel(doc_id, best, best_answer))
    found.sort(key=lambda p: (p.f1, p.doc_id), reverse=True)
    return found
