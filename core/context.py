"""Contextualised passages: a passage's text with its document's title and keyphrases put first.

A passage cut out of a long document often names its subject only by a
pronoun or a noun phrase ("the venue", "he"), so a retriever that sees the
passage alone cannot match a query that names the subject.  DAPR (Wang,
Reimers & Gurevych, "DAPR: A Benchmark on Document-Aware Passage Retrieval",
ACL 2024) found that most errors of state-of-the-art passage retrievers on
such queries come from this missing document context, and tested
*contextualised passage representations*: the passage text with document
context prepended, such as the document title or the document's keyphrases.
:func:`contextualise` builds those texts for any retriever (BM25 or dense).

Modes
-----
``"none"``
    the passage text as is.
``"title"``
    ``"{title} {text}"``; the title (stripped of surrounding whitespace) is not
    prepended when it is empty or when the text already starts with it.  This
    is exactly what :func:`pooljudge.corpus.load_corpus` has always built, so
    cached indexes and embeddings keyed by the texts stay valid.
``"keyphrases"``
    ``"{k1}, {k2}, ..., {kn} {text}"``: the document's keyphrases
    (:func:`document_keyphrases`), comma-separated, then a space and the text.
``"title+keyphrases"``
    ``"{title} {k1}, ..., {kn} {text}"``, the title left out under the same
    rule as ``"title"``.

A document without keyphrases (no candidate terms) adds nothing.

Keyphrases (a simple, unsupervised stand-in)
--------------------------------------------
The keyphrases of a document are its ``n`` terms of highest TF-IDF over the
collection's documents, a document being the concatenation of its passages'
texts (titles excluded: they are prepended separately).  With ``N``
documents and ``df(t)`` the number of documents containing term ``t``
(scikit-learn's ``TfidfVectorizer`` with ``smooth_idf=True, norm=None``)::

    tfidf(t, d) = tf(t, d) * (ln((1 + N) / (1 + df(t))) + 1)

Terms come from a pooljudge :class:`~core.text.Analyzer`, so Chinese is
segmented (jieba) rather than cut into clauses; the default analyzer is
``Analyzer(cjk="jieba", stem=True, stopwords="en_plus")``, the mixed
Chinese/English analyzer with the 179-word English stopword list.  Candidate
terms must be at least two characters long, contain a letter (numbers are
never keyphrases) and not be in bm25s's English (``STOPWORDS_EN_PLUS``) or
Chinese (``STOPWORDS_CHINESE``, 841 words) stopword lists; single CJK
characters (mostly particles such as 的, 了) are therefore never keyphrases.

Ties in TF-IDF are broken by the term's first occurrence in the document
(earlier first), which is unique, so the keyphrases are fully deterministic.

**Surface forms.**  Terms are stems (``"hill"``), but keyphrases are shown as
words: each term is shown as its most frequent original form in that
document (``"Hills"``), ties going to the form seen first; a possessive
``'s`` is dropped from the shown form.  Stemming first merges inflections
(``run``, ``running``, ``runs``) into one term frequency, which single
unstemmed words would split.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Literal

from core.text import Analyzer
from core.types import Passage
from core.validators import non_negative_int

__all__ = [
    "CONTEXT_MODES",
    "ContextMode",
    "DEFAULT_N_KEYPHRASES",
    "check_context_mode",
    "contextualise",
    "document_key",
    "document_keyphrases",
    "group_by_document",
    "with_title",
]

ContextMode = Literal["title", "keyphrases", "title+keyphrases", "none"]
CONTEXT_MODES: tuple[str, ...] = ("title", "keyphrases", "title+keyphrases", "none")
"""The context a passage text can be given (see the module docstring)."""

DEFAULT_N_KEYPHRASES = 5

_POSSESSIVE = re.compile(r"['\u2019][sS]$")


def check_context_mode(mode: str) -> str:
    """``mode`` if it is one of :data:`CONTEXT_MODES`, else a :class:`ValueError` naming them."""
    if mode not in CONTEXT_MODES:
        raise ValueError(f"context must be one of {', '.join(CONTEXT_MODES)}, got {mode!r}")
    return mode


def with_title(text: str, title: str) -> str:
    """``"{title} {text}"`` with ``title`` stripped, or ``text`` when the title is empty or already starts it."""
    title = title.strip()
    return f"{title} {text}" if title and not text.startswith(title) else text


# --------------------------------------------------------------------------- documents


def document_key(passage: Passage) -> str:
    """The document a passage belongs to: its ``doc_id``, or its own ``id`` when it has none."""
    return passage.doc_id if passage.doc_id is not None else passage.id


def group_by_document(passages: Sequence[Passage]) -> dict[str, list[int]]:
    """Indexes of ``passages`` grouped by document, each document's passages in ``position`` order.

    Parameters
    ----------
    passages : Sequence[Passage]
        Any passages.  A passage whose ``doc_id`` is ``None`` is a document of
        its own, known by the passage id.

    Returns
    -------
    dict of str to list of int
        ``{document id: [index into passages, ...]}``, documents in order of
        first appearance; within a document by ``position`` when every
        passage of it has one, in input order when none has.

    Raises
    ------
    ValueError
        When a document mixes passages with and without a position, two of
        its passages share a position, or a passage without ``doc_id`` has
        an id that is also another passage's ``doc_id`` (the two documents
        could not be told apart).
    """
    groups: dict[str, list[int]] = {}
    standalone: set[str] = set()
    with_doc: set[str] = set()
    for i, p in enumerate(passages):
        if not isinstance(p, Passage):
            raise TypeError(f"passages[{i}] must be a core.types.Passage, got {type(p).__name__}")
        key = document_key(p)
        (with_doc if p.doc_id is not None else standalone).add(key)
        groups.setdefault(key, []).append(i)
    clash = sorted(standalone & with_doc)
    if clash:
        raise ValueError(f"passage {clash[0]!r} has no doc_id and its id is also a document id: give it a doc_id")
    for key, rows in groups.items():
        positions = [pos for i in rows if (pos := passages[i].position) is not None]
        if not positions:
            continue
        if len(positions) != len(rows):
            raise ValueError(f"document {key!r} mixes passages with and without a position")
        dup = _first_repeat(positions)
        if dup is not None:
            raise ValueError(f"document {key!r} has two passages at position {dup}")
        rows[:] = [row for _, row in sorted(zip(positions, rows))]
    return groups


def _first_repeat(values: list[int]) -> int | None:
    """The first value of ``values`` that already came earlier, ``None`` when all differ."""
    seen: set[int] = set()
    for value in values:
        if value in seen:
            return value
        seen.add(value)
    return None


# --------------------------------------------------------------------------- keyphrases


def default_keyphrase_analyzer() -> Analyzer:
    """The analyzer keyphrases use by default: jieba for CJK, English stems, 179 English stopwords."""
    return Analyzer(cjk="jieba", stem=True, stopwords="en_plus")


@lru_cache(maxsize=1)
def _keyphrase_stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_CHINESE, STOPWORDS_EN_PLUS

    return frozenset(STOPWORDS_EN_PLUS) | frozenset(STOPWORDS_CHINESE)


def _is_candidate(surface: str, stop: frozenset[str]) -> bool:
    return len(surface) >= 2 and any(ch.isalpha() for ch in surface) and surface.lower() not in stop


def document_keyphrases(
    passages: Sequence[Passage],
    n: int = DEFAULT_N_KEYPHRASES,
    *,
    analyzer: Analyzer | None = None,
) -> dict[str, list[str]]:
    """The top-``n`` TF-IDF terms of every document, shown as words (see the module docstring).

    Parameters
    ----------
    passages : Sequence[Passage]
        The collection's passages; documents are formed by
        :func:`group_by_document`.
    n : int
        Keyphrases per document (default 5); a document with fewer
        candidate terms gets fewer.
    analyzer : Analyzer, optional
        Default :func:`default_keyphrase_analyzer`.

    Returns
    -------
    dict of str to list of str
        ``{document id: [keyphrase, ...]}``, best first, for every document.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    non_negative_int(n, "n")
    analyzer = default_keyphrase_analyzer() if analyzer is None else analyzer
    if not isinstance(analyzer, Analyzer):
        raise TypeError(f"analyzer must be a core.text.Analyzer, got {type(analyzer).__name__}")
    groups = group_by_document(passages)
    stop = _keyphrase_stopwords()
    doc_terms: list[list[str]] = []
    first_seen: list[dict[str, int]] = []
    surfaces: list[dict[str, dict[str, int]]] = []  # per document: term -> {surface form: count}, first seen first
    for rows in groups.values():
        terms, first, forms = _candidate_terms([passages[i].text for i in rows], analyzer, stop)
        doc_terms.append(terms)
        first_seen.append(first)
        surfaces.append(forms)
    result: dict[str, list[str]] = {key: [] for key in groups}
    if n == 0 or not any(doc_terms):
        return result
    vectorizer = TfidfVectorizer(analyzer=_identity, smooth_idf=True, norm=None, sublinear_tf=False)
    matrix = vectorizer.fit_transform(doc_terms).tocsr()
    vocabulary = vectorizer.get_feature_names_out()
    for row, key in enumerate(groups):
        start, end = matrix.indptr[row], matrix.indptr[row + 1]
        scored = [(float(s), str(vocabulary[j])) for j, s in zip(matrix.indices[start:end], matrix.data[start:end])]
        result[key] = _shown(scored, first_seen[row], surfaces[row], n)
    return result


def _candidate_terms(
    texts: list[str], analyzer: Analyzer, stop: frozenset[str]
) -> tuple[list[str], dict[str, int], dict[str, dict[str, int]]]:
    """One document's candidate terms in text order, each term's first index, and its surface forms counted."""
    terms: list[str] = []
    forms: dict[str, dict[str, int]] = {}
    first: dict[str, int] = {}
    for text in texts:
        for term, start, end in analyzer.tokenize_with_offsets(text):
            surface = _POSSESSIVE.sub("", text[start:end])
            if not _is_candidate(surface, stop):
                continue
            first.setdefault(term, len(terms))
            terms.append(term)
            counts = forms.setdefault(term, {})
            counts[surface] = counts.get(surface, 0) + 1
    return terms, first, forms


def _shown(
    scored: list[tuple[float, str]], first: dict[str, int], surfaces: dict[str, dict[str, int]], n: int
) -> list[str]:
    """The ``n`` best-scored terms (ties: first seen first), each as its most frequent surface form."""
    scored.sort(key=lambda st: (-st[0], first[st[1]]))
    shown = []
    for _, term in scored[:n]:
        counts = surfaces[term]
        # max() keeps the first of equal counts, and dicts keep first-seen order.
        shown.append(max(counts, key=counts.__getitem__))
    return shown


def _identity(terms: list[str]) -> list[str]:
    return terms


# --------------------------------------------------------------------------- contextualised texts


def contextualise(
    passages: Sequence[Passage] | Iterable[Passage],
    mode: ContextMode | str = "title",
    *,
    n_keyphrases: int = DEFAULT_N_KEYPHRASES,
    analyzer: Analyzer | None = None,
) -> list[str]:
    """The texts of ``passages`` with document context prepended (see the module docstring).

    Parameters
    ----------
    passages : Sequence[Passage]
        The collection's passages (keyphrases are computed over all of them).
    mode : {"title", "keyphrases", "title+keyphrases", "none"}
        What to prepend (default ``"title"``).
    n_keyphrases : int
        Keyphrases per document (default 5).
    analyzer : Analyzer, optional
        The analyzer keyphrases are computed with (default
        :func:`default_keyphrase_analyzer`); ignored by ``"title"`` and ``"none"``.

    Returns
    -------
    list of str
        One text per passage, in input order.

    Examples
    --------
    >>> contextualise([Passage("p1", "He was born in 1879.", title="Albert Einstein")])
    ['Albert Einstein He was born in 1879.']
    """
    check_context_mode(mode)
    passages = list(passages)
    use_title = mode in ("title", "title+keyphrases")
    keyphrases = document_keyphrases(passages, n_keyphrases, analyzer=analyzer) if mode.endswith("keyphrases") else None
    out: list[str] = []
    for p in passages:
        parts: list[str] = []
        title = p.title.strip()
        if use_title and title and not p.text.startswith(title):
            parts.append(title)
        if keyphrases is not None:
            phrases = keyphrases[document_key(p)]
            if phrases:
                parts.append(", ".join(phrases))
        out.append(" ".join([*parts, p.text]) if parts else p.text)
    return out
