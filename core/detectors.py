"""Automatic error-category suggestions for (query, passage) pairs, with evidence.

When a retriever ranks a passage wrongly, or an annotator labels it, it helps
to know *why* the pair is hard.  This module holds an error taxonomy and
small, transparent detectors that suggest categories for a pair and say what
they saw (``evidence``) and where in the passage (``spans``).  They are
*suggestions* for a human to confirm, not verdicts: every rule below is a
heuristic chosen to be explainable and to stay silent on a clean pair.

Taxonomy
--------
Two published error analyses are merged in :data:`TAXONOMY`:

* DuReader-retrieval (Qiu et al., "DuReader-retrieval: A Large-scale Chinese
  Benchmark for Passage Retrieval from Web Search Engine", EMNLP 2022,
  Table 10): *salient phrase mismatch* (entity, numeral, modifier),
  *syntactic mismatch*, *over-sensitivity to term overlap*, *typos*,
  *false negative* and *other*.
* DAPR (Wang, Reimers & Gurevych, "DAPR: A Benchmark on Document-Aware
  Passage Retrieval", 2024), the categories of its NQ-hard analysis of
  errors needing document context: *self-contained* (no context needed),
  *coreference resolution*, *main topic*, *multi-hop reasoning* and
  *acronym*.

:func:`merge_categories` adds a project's own categories.

Detectors and their rules
-------------------------
Every detector takes plain strings (and optional plain extras), returns a
``list[Suggestion]`` and never raises on odd text (empty strings, emoji,
control characters); only arguments of the wrong *type* raise.

``numeral_mismatch`` (:func:`detect_numeral_mismatch`)
    Numbers are read from Arabic digits (full-width ones through NFKC,
    ``1,000`` and ``3.5`` included) and Chinese numerals (digit by digit,
    ``二〇一六`` -> 2016, or positional, ``二十三`` -> 23; single characters
    such as ``一`` are ignored, they are mostly articles).  A number is a
    *year* when it is an integer between 1000 and 2999, else a *number*.
    Fires when, for one kind, the query has a number the passage lacks **and**
    the passage has a number of the same kind the query lacks (a year is never
    compared with a count).
``entity_mismatch`` (:func:`detect_entity_mismatch`)
    Chinese: proper nouns from jieba part-of-speech tags (``nr`` person,
    ``ns`` place, ``nt`` organisation, ``nz`` other proper noun and their
    sub-tags), two characters or more.  The four tags are one class, because
    jieba's tags between them are unreliable (``淘宝`` is ``nz`` but ``支付宝``
    is ``nr``).  English: runs of capitalised words (``"New York Times"``),
    a single capitalised word only when not sentence-initial, leading
    ``The`` and function words dropped.  Fires when a query entity does not
    occur in the passage **and** the passage has an entity that does not occur
    in the query (case-insensitive substring tests).
``syntactic_mismatch`` (:func:`detect_syntactic_mismatch`)
    Directed relations "from A to B": English ``from A to B``; Chinese
    ``[从] A (怎么|坐...)* 去/到/回/至/往/飞/前往... B`` over jieba POS tokens,
    A and B being nouns.  Fires when the passage states the reverse ``(B, A)``
    of a query relation and never the relation itself.
``term_overlap`` (:func:`detect_term_overlap`)
    Share of the query's distinct analyzer terms (a few Chinese particles
    removed) found in the passage.  Fires when the share is at least
    ``threshold`` (0.5) **and** the pair's label is low (0 or 1): the pair
    looks relevant lexically but is not.  Silent without a label.
``typo`` (:func:`detect_typos`)
    A query word (lowercased, Latin words and CJK words of 3+ characters) at
    Levenshtein distance 1 from a frequent collection term (count at least
    ``min_count``) that is itself rare (count at most ``ratio`` times the
    term's).  Glued words are split around a frequent term they contain
    (``"iponeiPhone"`` -> ``"ipone"`` + ``"iphone"``) and the pieces checked.
``false_negative`` (:func:`false_negative_candidates`, :func:`detect_false_negative`)
    A passage ranked in the top ``depth`` that is unjudged or labelled 0.
    When the query has reference answers (DuReader, RGB) the passage must
    also contain one of them (NFKC, case-insensitive): that is the evidence,
    and without it every unjudged top passage of a failing query would be
    suggested.
``main_topic`` (:func:`detect_main_topic`)
    Query terms found in the document title but not in the passage.
``coreference`` (:func:`detect_coreference`)
    The passage opens with a pronoun or definite reference (``It``, ``He``,
    ``The company``, ``该``, ``他``, ``这``...) and an earlier chunk of the
    document (or, failing that, the title) shares a term with the query or
    contains the title: that chunk is the evidence of the antecedent.
``acronym`` (:func:`detect_acronym`)
    An acronym is defined in the document (``International Space Station
    (ISS)`` or ``ISS (International Space Station)``, in the title, an earlier
    chunk or the passage).  Fires when the acronym occurs in the query or the
    passage and the passage does not carry both the acronym and its
    expansion.

Categories without a detector (``modifier_mismatch``, ``other``,
``self_contained``, ``multi_hop``) are for annotators to assign by hand.

:func:`suggest` runs every detector applicable to one pair.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.lang import detect_language, has_cjk_ideograph, is_cjk_ideograph
from core.prelabel import answer_strings
from core.ranking import rank_positions
from core.text import Analyzer, analyzer_for, jieba_tokenizer, normalize_with_offsets
from core.types import Qrels, Run
from core.validators import is_integer, positive_int, real_number

__all__ = [
    "TAXONOMY",
    "Category",
    "FalseNegativeCandidate",
    "Suggestion",
    "category_ids",
    "detect_acronym",
    "detect_coreference",
    "detect_entity_mismatch",
    "detect_false_negative",
    "detect_main_topic",
    "detect_numeral_mismatch",
    "detect_syntactic_mismatch",
    "detect_term_overlap",
    "detect_typos",
    "false_negative_candidates",
    "levenshtein",
    "merge_categories",
    "suggest",
]

Span = tuple[int, int]

# --------------------------------------------------------------------------- taxonomy


@dataclass(frozen=True, slots=True)
class Category:
    """One error category.

    Parameters
    ----------
    id : str
        Stable machine id (``"numeral_mismatch"``), used by :class:`Suggestion`.
    name : str
        Human-readable name.
    group : str
        Where it comes from: ``"dureader_retrieval"``, ``"dapr"`` or a user
        group (``"user"`` by default for :func:`merge_categories`).
    description : str
        What the category means, for annotators.
    parent : str or None
        A parent heading, e.g. ``"salient_phrase_mismatch"`` for the entity,
        numeral and modifier categories of DuReader-retrieval Table 10.
    """

    id: str
    name: str
    group: str
    description: str = ""
    parent: str | None = None

    def __post_init__(self) -> None:
        for name in ("id", "name", "group", "description"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"Category.{name} must be a str, got {type(getattr(self, name)).__name__}")
        if not self.id.strip() or not self.name.strip() or not self.group.strip():
            raise ValueError("Category id, name and group must not be empty")
        if self.parent is not None and not isinstance(self.parent, str):
            raise TypeError("Category.parent must be a str or None")


_DR = "dureader_retrieval"
_SALIENT = "salient_phrase_mismatch"

TAXONOMY: tuple[Category, ...] = (
    # DuReader-retrieval (Qiu et al., EMNLP 2022), Table 10.
    Category("entity_mismatch", "Salient phrase mismatch: entity", _DR,
             "The passage is about a different named entity (person, place, organisation, product) "
             "than the query.", _SALIENT),
    Category("numeral_mismatch", "Salient phrase mismatch: numeral", _DR,
             "A number or year in the query differs from the one in the passage.", _SALIENT),
    Category("modifier_mismatch", "Salient phrase mismatch: modifier", _DR,
             "A modifier that restricts the query (e.g. 'free', 'for children') is not satisfied "
             "by the passage.", _SALIENT),
    Category("syntactic_mismatch", "Syntactic mismatch", _DR,
             "Query and passage share the key terms but in different roles or order "
             "(e.g. 'from A to B' versus 'from B to A')."),
    Category("term_overlap", "Over-sensitivity to term overlap", _DR,
             "The passage shares many terms with the query but does not meet its need."),
    Category("typo", "Typos", _DR, "The query contains a misspelling of a frequent term."),
    Category("false_negative", "False negative", _DR,
             "A highly ranked passage is unjudged or labelled irrelevant but may be relevant."),
    Category("other", "Other", _DR, "None of the above."),
    # DAPR (Wang et al., 2024), NQ-hard categories.
    Category("self_contained", "Self-contained", "dapr",
             "The passage answers the query without any document context."),
    Category("coreference", "Coreference resolution", "dapr",
             "The passage refers to the query's subject by a pronoun or definite description "
             "whose antecedent is elsewhere in the document."),
    Category("main_topic", "Main topic", "dapr",
             "The query names the document's main topic (its title), which the passage does not repeat."),
    Category("multi_hop", "Multi-hop reasoning", "dapr",
             "Answering needs facts from several passages of the document."),
    Category("acronym", "Acronym", "dapr",
             "An acronym and its expansion are used in different places (query, passage, document)."),
)
"""The built-in taxonomy: DuReader-retrieval Table 10 then DAPR's NQ-hard categories."""


def category_ids(categories: Iterable[Category] = TAXONOMY) -> list[str]:
    """The ids of ``categories``, in order."""
    return [c.id for c in categories]


def _as_category(item: Category | Mapping[str, Any], default_group: str) -> Category:
    if isinstance(item, Category):
        return item
    if isinstance(item, Mapping):
        unknown = set(item) - {"id", "name", "group", "description", "parent"}
        if unknown:
            raise ValueError(f"unknown category fields: {', '.join(sorted(unknown))}")
        if "id" not in item:
            raise ValueError(f"a category needs an 'id': {dict(item)!r}")
        return Category(
            id=item["id"],
            name=item.get("name", item["id"]),
            group=item.get("group", default_group),
            description=item.get("description", ""),
            parent=item.get("parent"),
        )
    raise TypeError(f"a category must be a Category or a mapping, got {type(item).__name__}")


def merge_categories(
    user: Iterable[Category | Mapping[str, Any]],
    base: Sequence[Category] = TAXONOMY,
    *,
    replace: bool = False,
    default_group: str = "user",
) -> tuple[Category, ...]:
    """Extend a taxonomy with a project's own categories.

    Parameters
    ----------
    user : iterable of Category or mapping
        The new categories; a mapping needs ``id`` and may give ``name``
        (defaults to the id), ``group`` (defaults to ``default_group``),
        ``description`` and ``parent``.
    base : sequence of Category, optional
        The taxonomy to extend (:data:`TAXONOMY` by default).
    replace : bool, optional
        Let a user category replace the base category with the same id (kept
        at the base's position).  Off by default: a clash raises.
    default_group : str, optional
        Group of mapping categories that give none.

    Returns
    -------
    tuple of Category
        The base categories (some replaced) then the new ones, in the order given.

    Raises
    ------
    ValueError
        When two user categories share an id, or one clashes with a base id
        and ``replace`` is false.
    TypeError
        When an item is neither a :class:`Category` nor a mapping.
    """
    merged = list(base)
    index = {c.id: i for i, c in enumerate(merged)}
    if len(index) != len(merged):
        raise ValueError("the base taxonomy has duplicate ids")
    seen: set[str] = set()
    for item in user:
        cat = _as_category(item, default_group)
        if cat.id in seen:
            raise ValueError(f"duplicate user category id {cat.id!r}")
        seen.add(cat.id)
        if cat.id in index:
            if not replace:
                raise ValueError(f"category id {cat.id!r} is already in the taxonomy (pass replace=True)")
            merged[index[cat.id]] = cat
        else:
            index[cat.id] = len(merged)
            merged.append(cat)
    return tuple(merged)


# --------------------------------------------------------------------------- suggestions


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A suggested error category for one (query, passage) pair.

    Parameters
    ----------
    category : str
        A :class:`Category` id.
    evidence : dict
        What the detector saw (JSON-serialisable: strings, numbers, lists).
    spans : list of (int, int)
        Character spans ``(start, end)`` into the *passage* to highlight;
        may be empty.
    """

    category: str
    evidence: dict[str, Any] = field(default_factory=dict)
    spans: list[Span] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (spans as lists), for JSON."""
        return {"category": self.category, "evidence": self.evidence, "spans": [list(s) for s in self.spans]}


def _check_str(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    return value


def _resolve_language(language: str | None, *texts: str) -> str:
    if language is None:
        return "zh" if any(detect_language(t) == "zh" for t in texts if t) else "en"
    if language not in ("en", "zh", "mixed"):
        raise ValueError(f"language must be 'en', 'zh', 'mixed' or None, got {language!r}")
    return "en" if language == "en" else "zh"


class _Norm:
    """NFKC-normalised text with a map back to the original offsets."""

    __slots__ = ("ends", "starts", "text")

    def __init__(self, text: str) -> None:
        self.text, self.starts, self.ends = normalize_with_offsets(text)

    def span(self, s: int, e: int) -> Span:
        if self.starts is None or self.ends is None or e <= s:
            return (s, e)
        return (self.starts[s], self.ends[e - 1])


def _find_all(haystack: str, needle: str) -> list[Span]:
    """Case-insensitive occurrences of ``needle`` in ``haystack`` (original offsets)."""
    if not needle:
        return []
    norm = _Norm(haystack)
    low, pat = norm.text.lower(), normalize_with_offsets(needle)[0].lower()
    out: list[Span] = []
    if len(low) != len(norm.text) or not pat:  # lowercasing changed lengths: give up on spans
        return out
    i = low.find(pat)
    while i >= 0:
        out.append(norm.span(i, i + len(pat)))
        i = low.find(pat, i + len(pat))
    return out


def _contains(haystack: str, needle: str) -> bool:
    return bool(needle) and normalize_with_offsets(needle)[0].lower() in normalize_with_offsets(haystack)[0].lower()


# --------------------------------------------------------------------------- numerals

_ARABIC = re.compile(r"(?<![0-9.])(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?")
_ZH_DIGITS = {"〇": 0, "○": 0, "零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5,
              "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000}
_ZH_NUMERAL = re.compile("[〇○零一二两三四五六七八九十百千万]+")


def _parse_zh_numeral(s: str) -> int | None:
    """Value of a Chinese numeral, or ``None`` when it is not read as a number."""
    if len(s) < 2:
        return None
    if all(ch in _ZH_DIGITS for ch in s):  # digit by digit: 二〇一六
        return int("".join(str(_ZH_DIGITS[ch]) for ch in s))
    total, section, digit = 0, 0, None
    for i, ch in enumerate(s):
        if ch in _ZH_DIGITS:
            if digit is not None and _ZH_DIGITS[ch] != 0 and digit != 0:
                return None  # two non-zero digits in a row in a positional numeral
            digit = _ZH_DIGITS[ch]
        elif ch in _ZH_UNITS:
            if digit is None:
                if not (ch == "十" and i == 0):
                    return None
                digit = 1  # 十二 = 12
            section += digit * _ZH_UNITS[ch]
            digit = None
        else:  # 万
            if digit is None and section == 0:
                return None
            total += (section + (digit or 0)) * 10_000
            section, digit = 0, None
    return total + section + (digit or 0)


def _numbers(text: str) -> list[tuple[str, str, Span]]:
    """``(value, kind, span)`` of the numbers of ``text``, in text order."""
    norm = _Norm(text)
    found: list[tuple[int, str, str, Span]] = []
    for m in _ARABIC.finditer(norm.text):
        raw = m.group().replace(",", "")
        try:
            if "." in raw:
                value = format(float(raw), "g") if len(raw) < 16 else raw
                kind = "number"
            else:
                n = int(raw)
                is_year = "," not in m.group() and len(raw) == 4 and 1000 <= n <= 2999  # "1,000" is a count
                value, kind = str(n), ("year" if is_year else "number")
        except ValueError:  # pragma: no cover - the regex only matches digits
            continue
        found.append((m.start(), value, kind, norm.span(*m.span())))
    for m in _ZH_NUMERAL.finditer(norm.text):
        n = _parse_zh_numeral(m.group())
        if n is None:
            continue
        digit_by_digit = len(m.group()) == 4 and all(ch in _ZH_DIGITS for ch in m.group())
        kind = "year" if digit_by_digit and 1000 <= n <= 2999 else "number"
        found.append((m.start(), str(n), kind, norm.span(*m.span())))
    found.sort(key=lambda x: x[0])
    return [(v, k, sp) for _, v, k, sp in found]


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def detect_numeral_mismatch(query: str, passage: str) -> list[Suggestion]:
    """Numbers or years of the query that differ from the passage's (DuReader-retrieval Table 10).

    Parameters
    ----------
    query, passage : str
        The pair.

    Returns
    -------
    list of Suggestion
        At most one ``numeral_mismatch`` suggestion, evidence
        ``{"query": [...], "passage": [...]}`` (the query's numbers missing
        from the passage and the passage's numbers of the same kind missing
        from the query, as normalised strings: ``"２０１６"`` -> ``"2016"``),
        spans on those passage numbers.

    Examples
    --------
    >>> detect_numeral_mismatch("最近有什么好听的歌2016", "2017年最好听的歌曲")[0].evidence
    {'query': ['2016'], 'passage': ['2017']}
    """
    _check_str("query", query), _check_str("passage", passage)
    q, p = _numbers(query), _numbers(passage)
    q_missing: list[str] = []
    p_extra: list[str] = []
    spans: list[Span] = []
    for kind in ("year", "number"):
        qv = {v for v, k, _ in q if k == kind}
        pv = {v for v, k, _ in p if k == kind}
        missing = [v for v, k, _ in q if k == kind and v not in pv]
        extra = [(v, sp) for v, k, sp in p if k == kind and v not in qv]
        if missing and extra:
            q_missing.extend(missing)
            p_extra.extend(v for v, _ in extra)
            spans.extend(sp for _, sp in extra)
    if not q_missing:
        return []
    return [Suggestion("numeral_mismatch", {"query": _unique(q_missing), "passage": _unique(p_extra)}, sorted(spans))]


# --------------------------------------------------------------------------- Chinese POS

_POS_LOCK = threading.Lock()
_POS: Any = None


def _pos_tokenizer() -> Any:
    """A private ``jieba.posseg.POSTokenizer`` over core.text's private jieba tokenizer."""
    global _POS
    if _POS is None:
        with _POS_LOCK:
            if _POS is None:
                import jieba.posseg

                _POS = jieba.posseg.POSTokenizer(jieba_tokenizer())
    return _POS


def _pos_tokens(text: str) -> list[tuple[str, str, Span]]:
    """``(word, flag, original span)`` of jieba POS tagging of the NFKC form of ``text``."""
    norm = _Norm(text)
    out: list[tuple[str, str, Span]] = []
    pos = 0
    for pair in _pos_tokenizer().cut(norm.text):
        word, flag = pair.word, pair.flag
        start = norm.text.find(word, pos)
        if start < 0:
            continue
        pos = start + len(word)
        out.append((word, flag, norm.span(start, pos)))
    return out


_ZH_ENTITY_TAGS = ("nr", "ns", "nt", "nz")


def _zh_entities(text: str) -> list[tuple[str, str, Span]]:
    return [t for t in _pos_tokens(text) if t[1].startswith(_ZH_ENTITY_TAGS) and len(t[0]) >= 2]


# --------------------------------------------------------------------------- English names

_CAP_WORD = re.compile(r"[A-Z][A-Za-z0-9'’&.-]*")
_EN_NOT_NAMES = frozenset(
    "a an the it its he she they we i you his her their this that these those there here what when who whom "
    "whose which why how where in on at of for to from by with and or but if is are was were be do does did "
    "can could will would should may might must not no yes".split()
)
_CONNECTORS = frozenset({"of", "de", "la", "le", "von", "van", "der", "du", "da", "&"})
_WORD_TOKEN = re.compile(r"[^\W_]+(?:['’.&-][^\W_]+)*|[.!?;:\n]")


def _en_entities(text: str) -> list[tuple[str, Span]]:
    """Capitalised names: runs of capitalised words; a single one only when not sentence-initial."""
    out: list[tuple[str, Span]] = []
    tokens = list(_WORD_TOKEN.finditer(text))
    sentence_start = True
    i = 0
    while i < len(tokens):
        tok = tokens[i].group()
        if tok in ".!?;:\n":
            sentence_start = True
            i += 1
            continue
        if _CAP_WORD.fullmatch(tok) and tok.lower() not in _EN_NOT_NAMES:
            j = i
            words = [i]
            while j + 1 < len(tokens):
                nxt = tokens[j + 1].group()
                if _CAP_WORD.fullmatch(nxt) and nxt.lower() not in _EN_NOT_NAMES:
                    j += 1
                    words.append(j)
                elif nxt.lower() in _CONNECTORS and j + 2 < len(tokens) and _CAP_WORD.fullmatch(tokens[j + 2].group()):
                    j += 2
                    words.append(j)
                else:
                    break
            if len(words) > 1 or not sentence_start:
                s, e = tokens[i].start(), tokens[j].end()
                out.append((text[s:e], (s, e)))
            i = j + 1
        else:
            i += 1
        sentence_start = False
    return out


def detect_entity_mismatch(query: str, passage: str, *, language: str | None = None) -> list[Suggestion]:
    """A query entity absent from the passage, which names another entity (DuReader-retrieval Table 10).

    Parameters
    ----------
    query, passage : str
        The pair.
    language : {"en", "zh", "mixed"} or None, optional
        ``None`` detects it (Chinese when either text is Chinese).

    Returns
    -------
    list of Suggestion
        At most one ``entity_mismatch`` suggestion, evidence
        ``{"query": [...], "passage": [...], "method": "jieba_pos" | "capitalisation"}``,
        spans on the passage's other entities.

    Examples
    --------
    >>> detect_entity_mismatch("淘宝修改实名认证", "支付宝实名认证怎么修改")[0].evidence["query"]
    ['淘宝']
    """
    _check_str("query", query), _check_str("passage", passage)
    lang = _resolve_language(language, query, passage)
    if lang == "zh":
        q_ents = [(w, sp) for w, _, sp in _zh_entities(query)]
        p_ents = [(w, sp) for w, _, sp in _zh_entities(passage)]
        method = "jieba_pos"
    else:
        q_ents, p_ents = [], []
        method = "capitalisation"
    # English names in either language (Latin names inside Chinese text too).
    q_ents += _en_entities(query)
    p_ents += _en_entities(passage)
    missing = _unique(w for w, _ in q_ents if not _contains(passage, w))
    other = [(w, sp) for w, sp in p_ents if not _contains(query, w)]
    if not missing or not other:
        return []
    return [Suggestion("entity_mismatch",
                       {"query": missing, "passage": _unique(w for w, _ in other), "method": method},
                       sorted({sp for _, sp in other}))]


# --------------------------------------------------------------------------- syntactic mismatch

_ZH_MOTION = frozenset({"去", "到", "回", "至", "往", "飞", "前往", "开往", "飞往", "回到", "到达", "抵达", "返回", "去往"})
_EN_FROM_TO = re.compile(
    r"\bfrom\s+(?P<a>[^\W\d_][\w'’-]*(?:\s+[^\W\d_][\w'’-]*){0,3}?)\s+to\s+"
    r"(?P<b>[^\W\d_][\w'’-]*(?:\s+[^\W\d_][\w'’-]*){0,3}?)"
    r"(?=\s+(?:on|in|at|for|by|via|with|and|or|is|are|was|takes?|tomorrow|today)\b|\s*[.,;:!?()]|\s*$)",
    re.IGNORECASE,
)


def _is_noun(word: str, flag: str) -> bool:
    return (flag.startswith("n") or flag == "eng") and len(word) >= 2 and word not in _ZH_MOTION


def _relations(text: str, analyzer: Analyzer) -> list[tuple[str, str, str, str, Span, Span]]:
    """Directed relations ``(key_a, key_b, surface_a, surface_b, span_a, span_b)`` of ``text``."""
    out: list[tuple[str, str, str, str, Span, Span]] = []

    def key(s: str) -> str:
        return " ".join(analyzer.tokenize(s)) or s.lower()

    for m in _EN_FROM_TO.finditer(text):
        a, b = m.group("a"), m.group("b")
        out.append((key(a), key(b), a, b, m.span("a"), m.span("b")))
    if has_cjk_ideograph(text):
        toks = _pos_tokens(text)
        for i, (word, flag, _) in enumerate(toks):
            if word not in _ZH_MOTION:
                continue
            src = None
            for j in range(i - 1, max(-1, i - 5), -1):
                w, f, _ = toks[j]
                if f == "x":
                    break
                if _is_noun(w, f):
                    src = toks[j]
                    break
            dst = None
            for j in range(i + 1, min(len(toks), i + 4)):
                w, f, _ = toks[j]
                if f == "x":
                    break
                if _is_noun(w, f):
                    dst = toks[j]
                    break
            if src is not None and dst is not None and src[0] != dst[0]:
                out.append((key(src[0]), key(dst[0]), src[0], dst[0], src[2], dst[2]))
    return out


def detect_syntactic_mismatch(query: str, passage: str, *, analyzer: Analyzer | None = None) -> list[Suggestion]:
    """The passage states a query's directed relation backwards (DuReader-retrieval Table 10).

    Parameters
    ----------
    query, passage : str
        The pair.
    analyzer : Analyzer, optional
        Used to compare the two ends of a relation (stemmed terms); the
        mixed Chinese analyzer by default.

    Returns
    -------
    list of Suggestion
        At most one ``syntactic_mismatch`` suggestion, evidence
        ``{"query": [A, B], "passage": [B, A], "relation": "from-to"}``,
        spans on B and A in the passage.

    Examples
    --------
    >>> detect_syntactic_mismatch("台北怎么去瑞芳", "从瑞芳回台北可以坐火车")[0].evidence["passage"]
    ['瑞芳', '台北']
    """
    _check_str("query", query), _check_str("passage", passage)
    analyzer = analyzer or analyzer_for("mixed")
    q_rel = _relations(query, analyzer)
    if not q_rel:
        return []
    p_rel = _relations(passage, analyzer)
    forward = {(a, b) for a, b, *_ in p_rel}
    for qa, qb, qsa, qsb, _, _ in q_rel:
        if (qa, qb) in forward:
            continue
        for pa, pb, psa, psb, spa, spb in p_rel:
            if (pa, pb) == (qb, qa):
                return [Suggestion("syntactic_mismatch",
                                   {"query": [qsa, qsb], "passage": [psa, psb], "relation": "from-to"},
                                   sorted([spa, spb]))]
    return []


# --------------------------------------------------------------------------- term overlap

_ZH_PARTICLES = frozenset("了的吗呢吧啊呀么着过地得是在和与及或也都就很")


def _content_terms(text: str, analyzer: Analyzer) -> list[tuple[str, int, int]]:
    return [t for t in analyzer.tokenize_with_offsets(text) if t[0] not in _ZH_PARTICLES]


def detect_term_overlap(
    query: str,
    passage: str,
    *,
    label: int | None,
    threshold: float = 0.5,
    max_label: int = 1,
    analyzer: Analyzer | None = None,
) -> list[Suggestion]:
    """High lexical overlap with a low label: over-sensitivity to term overlap (DuReader-retrieval Table 10).

    Parameters
    ----------
    query, passage : str
        The pair.
    label : int or None
        The pair's graded label; the detector is silent when ``None`` or
        above ``max_label``.
    threshold : float, optional
        Minimum share of the query's distinct content terms found in the
        passage (default 0.5).
    max_label : int, optional
        Highest label counted as low (default 1: "on topic but does not meet
        the need").
    analyzer : Analyzer, optional
        The mixed Chinese analyzer by default.

    Returns
    -------
    list of Suggestion
        At most one ``term_overlap`` suggestion, evidence
        ``{"overlap": share, "shared": [...], "query_terms": n, "label": label}``,
        spans on the shared terms in the passage.
    """
    _check_str("query", query), _check_str("passage", passage)
    real_number(threshold, "threshold", low=0, high=1, low_open=True)
    if label is not None and not is_integer(label):
        raise TypeError(f"label must be an int or None, got {type(label).__name__}")
    if label is None or label > max_label:
        return []
    analyzer = analyzer or analyzer_for("mixed")
    q_terms = _unique(t for t, _, _ in _content_terms(query, analyzer))
    if not q_terms:
        return []
    p_terms = _content_terms(passage, analyzer)
    p_set = {t for t, _, _ in p_terms}
    shared = [t for t in q_terms if t in p_set]
    share = len(shared) / len(q_terms)
    if not shared or share < threshold:
        return []
    wanted = set(shared)
    spans = sorted({(s, e) for t, s, e in p_terms if t in wanted})
    return [Suggestion("term_overlap",
                       {"overlap": round(share, 4), "shared": shared, "query_terms": len(q_terms), "label": label},
                       spans)]


# --------------------------------------------------------------------------- typos


def levenshtein(a: str, b: str, *, max_distance: int | None = None) -> int:
    """Levenshtein edit distance (insertions, deletions, substitutions, each cost 1).

    Written here because neither ``rapidfuzz`` nor ``python-Levenshtein`` is
    a dependency of pooljudge (checked with ``pip list``); a two-row dynamic
    programme is enough for query words.

    Parameters
    ----------
    a, b : str
        The strings.
    max_distance : int, optional
        Stop early and return ``max_distance + 1`` once the distance is known
        to exceed it.

    Returns
    -------
    int

    Examples
    --------
    >>> levenshtein("ipone", "iphone")
    1
    """
    _check_str("a", a), _check_str("b", b)
    if max_distance is not None and abs(len(a) - len(b)) > max_distance:
        return max_distance + 1
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        if max_distance is not None and min(cur) > max_distance:
            return max_distance + 1
        prev = cur
    return prev[-1]


_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'’]*")


def _query_words(query: str) -> list[tuple[str, str]]:
    """``(lowercased word, surface)`` candidates for typo checks: Latin words and CJK words of 3+ chars."""
    norm = normalize_with_offsets(query)[0]
    out = [(m.group().lower(), m.group()) for m in _LATIN_WORD.finditer(norm)]
    if has_cjk_ideograph(norm):  # every CJK block (core.lang.CJK_RANGES), Extension A included
        for word in jieba_tokenizer().cut(norm):
            if len(word) >= 3 and all(map(is_cjk_ideograph, word)):
                out.append((word, word))
    return out


def detect_typos(
    query: str,
    passage: str,
    term_frequencies: Mapping[str, int],
    *,
    min_count: int = 5,
    ratio: float = 0.1,
    min_length: int = 4,
) -> list[Suggestion]:
    """Query words one edit away from a frequent collection term (DuReader-retrieval Table 10, typos).

    Parameters
    ----------
    query, passage : str
        The pair (spans point at the corrected term in the passage, if there).
    term_frequencies : mapping of str to int
        Collection counts of lowercased surface words (``"iphone": 120``);
        only terms of at least ``min_length`` characters counted at least
        ``min_count`` times are corrections.
    min_count : int, optional
        Minimum count of a correction (default 5).
    ratio : float, optional
        A word is a typo only when its own count is at most ``ratio`` times
        the correction's (default 0.1), so two frequent spellings are left alone.
    min_length : int, optional
        Minimum length of the correction (default 4): one edit on a short word
        is too often another word.

    Returns
    -------
    list of Suggestion
        One ``typo`` suggestion per typo, evidence
        ``{"query_term", "correction", "distance", "frequency", "word"}``
        (``word`` is the query word the typo was found in).
    """
    _check_str("query", query), _check_str("passage", passage)
    if not isinstance(term_frequencies, Mapping):
        raise TypeError("term_frequencies must be a mapping of term to count")
    if min_count < 1 or not 0 <= ratio < 1 or min_length < 1:
        raise ValueError("min_count and min_length must be >= 1 and ratio in [0, 1)")
    frequent: dict[int, list[tuple[str, int]]] = {}
    for term, count in term_frequencies.items():
        if isinstance(term, str) and isinstance(count, int) and count >= min_count and len(term) >= min_length:
            frequent.setdefault(len(term), []).append((term.lower(), count))
    if not frequent:
        return []

    def count_of(w: str) -> int:
        c = term_frequencies.get(w, 0)
        return c if isinstance(c, int) else 0

    def correction(piece: str) -> tuple[str, int] | None:
        if len(piece) < min_length - 1 or piece.isdigit():
            return None
        best: tuple[str, int] | None = None
        for n in (len(piece) - 1, len(piece), len(piece) + 1):
            for term, count in frequent.get(n, ()):
                if term != piece and count_of(piece) <= ratio * count and levenshtein(piece, term, max_distance=1) == 1:
                    if best is None or count > best[1]:
                        best = (term, count)
        return best

    out: list[Suggestion] = []
    seen: set[str] = set()
    for word, surface in _query_words(query):
        pieces = [word]
        if count_of(word) < min_count:  # a glued word: split around a frequent term inside it
            for terms in frequent.values():
                for term, _ in terms:
                    i = word.find(term)
                    if i >= 0 and term != word:
                        pieces.extend(p for p in (word[:i], word[i + len(term):]) if p)
        for piece in pieces:
            if piece in seen:
                continue
            found = correction(piece)
            if found is None:
                continue
            seen.add(piece)
            term, count = found
            out.append(Suggestion("typo",
                                  {"query_term": piece, "correction": term, "distance": 1,
                                   "frequency": count, "word": surface},
                                  _find_all(passage, term)))
    return out


# --------------------------------------------------------------------------- false negatives


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
    evidence: dict[str, Any] = {"rank": rank, "score": score, "label": label}
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
            span = (at, end) if starts is None else (starts[at], ends[end - 1])
            return [Suggestion("false_negative", evidence | {"answer": answer}, [span])]
    return []


# --------------------------------------------------------------------------- document context (DAPR)


def detect_main_topic(
    query: str, passage: str, title: str, *, analyzer: Analyzer | None = None
) -> list[Suggestion]:
    """Query terms that are in the document title but not in the passage (DAPR, main topic).

    Returns
    -------
    list of Suggestion
        At most one ``main_topic`` suggestion, evidence
        ``{"title": title, "terms": [query words]}`` (the query's surface
        words, in query order), no spans.
    """
    _check_str("query", query), _check_str("passage", passage), _check_str("title", title)
    if not title.strip():
        return []
    analyzer = analyzer or analyzer_for("mixed")
    title_terms = set(analyzer.tokenize(title))
    passage_terms = set(analyzer.tokenize(passage))
    missing = [(t, s, e) for t, s, e in analyzer.tokenize_with_offsets(query)
               if t in title_terms and t not in passage_terms and t not in _ZH_PARTICLES]
    if not missing:
        return []
    return [Suggestion("main_topic", {"title": title, "terms": _unique(query[s:e] for _, s, e in missing)}, [])]


_EN_PRONOUN = re.compile(
    r"(?:It|He|She|They|Its|His|Her|Their|Them|This|These|That|Those|"
    r"(?:The|This|That|These|Those)\s+(?:company|companies|city|town|village|country|state|band|group|film|movie|"
    r"book|novel|album|song|single|team|club|building|tower|bridge|river|lake|mountain|island|station|school|"
    r"university|college|game|series|show|player|singer|actor|actress|artist|writer|author|region|area|park|"
    r"church|museum|war|battle|party|species|organization|organisation|program|programme|project|ship|"
    r"aircraft|vehicle|system|site|structure|church|network|channel|event|tournament|championship|league|"
    r"law|act|treaty|disease|character|family|king|queen|president|emperor|house|festival|award))\b"
)
_ZH_PRONOUN = re.compile(r"(?!其他|其中|其实|其次|此外|那么|这么|那样|这样|他人)(?:他们|她们|它们|该|此|其|他|她|它|这|那)")
_LEADING = re.compile(r"[\s\"'“”‘’«»「」『』《》()（）\[\]【】\-–—:：,，.。]*")


def _opening_reference(passage: str) -> tuple[str, Span] | None:
    start = _LEADING.match(passage).end()  # type: ignore[union-attr]
    for pattern in (_EN_PRONOUN, _ZH_PRONOUN):
        m = pattern.match(passage, start)
        if m:
            return m.group(), m.span()
    return None


def detect_coreference(
    query: str,
    passage: str,
    *,
    title: str = "",
    earlier_chunks: Sequence[str] = (),
    analyzer: Analyzer | None = None,
) -> list[Suggestion]:
    """The passage opens with a reference whose antecedent is earlier in the document (DAPR, coreference).

    Parameters
    ----------
    query, passage : str
        The pair.
    title : str, optional
        The document title.
    earlier_chunks : sequence of str, optional
        The texts of the passages that come before this one in the document,
        in document order.
    analyzer : Analyzer, optional
        The mixed Chinese analyzer by default.

    Returns
    -------
    list of Suggestion
        At most one ``coreference`` suggestion, evidence
        ``{"reference": "It", "antecedent_chunk": i or None, "antecedent": text,
        "matched": [terms]}``: the first earlier chunk that contains the
        title or shares a query term, or the title itself (``antecedent_chunk``
        ``None``) when no earlier chunk does but the title shares a query
        term.  Span on the reference.
    """
    _check_str("query", query), _check_str("passage", passage), _check_str("title", title)
    if isinstance(earlier_chunks, str):
        raise TypeError("earlier_chunks must be a sequence of str, not a str")
    ref = _opening_reference(passage)
    if ref is None:
        return []
    analyzer = analyzer or analyzer_for("mixed")
    q_terms = set(analyzer.tokenize(query)) - _ZH_PARTICLES
    for i, chunk in enumerate(earlier_chunks):
        _check_str(f"earlier_chunks[{i}]", chunk)
        matched = _unique(t for t in analyzer.tokenize(chunk) if t in q_terms)
        if title.strip() and _contains(chunk, title.strip()):
            matched = _unique([title.strip(), *matched])
        if matched:
            return [Suggestion("coreference",
                               {"reference": ref[0], "antecedent_chunk": i, "antecedent": chunk[:300],
                                "matched": matched}, [ref[1]])]
    matched = _unique(t for t in analyzer.tokenize(title) if t in q_terms)
    if matched:
        return [Suggestion("coreference",
                           {"reference": ref[0], "antecedent_chunk": None, "antecedent": title,
                            "matched": matched}, [ref[1]])]
    return []


_ACRONYM = re.compile(r"(?<![A-Za-z0-9])[A-Z][A-Za-z0-9&]{1,9}(?![A-Za-z0-9])")
_PAREN_AFTER = re.compile(r"\(\s*([A-Z][A-Za-z0-9&]{1,9})\s*\)")
_PAREN_LONG = re.compile(r"(?<![A-Za-z0-9])([A-Z][A-Za-z0-9&]{1,9})\s*\(([^()]{3,120})\)")
_MINOR = frozenset({"of", "the", "and", "for", "in", "on", "at", "to", "a", "an", "&", "de", "du", "la"})
_EXP_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'’]*(?:-[A-Za-z0-9]+)*")


def _acronym_letters(acr: str) -> str:
    return "".join(ch for ch in acr if ch.isupper())


def _is_acronym(token: str) -> bool:
    return len(_acronym_letters(token)) >= 2 and sum(ch.isupper() for ch in token) * 2 >= len(token)


def _initials_match(words: list[str], letters: str) -> bool:
    initials = "".join(w[0].upper() for w in words if w.lower() not in _MINOR)
    if initials == letters:
        return True
    # hyphenated words may give one initial per part ("Self-Contained Underwater ..." )
    parts = "".join(p[0].upper() for w in words if w.lower() not in _MINOR for p in w.split("-") if p)
    return parts == letters


def _definitions(text: str) -> dict[str, str]:
    """``{acronym: expansion}`` defined in ``text`` as ``Long Form (ACR)`` or ``ACR (Long Form)``."""
    out: dict[str, str] = {}
    for m in _PAREN_AFTER.finditer(text):
        acr = m.group(1)
        letters = _acronym_letters(acr)
        if not _is_acronym(acr):
            continue
        before = list(_EXP_WORD.finditer(text[max(0, m.start() - 300):m.start()]))
        offset = max(0, m.start() - 300)
        for k in range(1, min(len(before), 2 * len(letters) + 2) + 1):
            words = [w.group() for w in before[-k:]]
            if words[0].lower() in _MINOR:
                continue
            if _initials_match(words, letters):
                s, e = before[-k].start() + offset, before[-1].end() + offset
                out.setdefault(acr, text[s:e])
                break
    for m in _PAREN_LONG.finditer(text):
        acr, inner = m.group(1), m.group(2).strip()
        if _is_acronym(acr) and acr not in out and _initials_match(_EXP_WORD.findall(inner), _acronym_letters(acr)):
            out[acr] = inner
    return out


def _has_acronym(text: str, acr: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(acr)}(?![A-Za-z0-9])", text, re.IGNORECASE) is not None


def detect_acronym(
    query: str,
    passage: str,
    *,
    title: str = "",
    earlier_chunks: Sequence[str] = (),
) -> list[Suggestion]:
    """An acronym of the query or passage that the document expands (DAPR, acronym).

    Parameters
    ----------
    query, passage : str
        The pair (the query may write the acronym in lower case).
    title : str, optional
        The document title.
    earlier_chunks : sequence of str, optional
        The passages before this one in the document.

    Returns
    -------
    list of Suggestion
        One ``acronym`` suggestion per acronym, evidence ``{"acronym",
        "expansion", "defined_in": "title" | "earlier_chunk" | "passage",
        "chunk_index", "in_query", "in_passage"}``, spans on the acronym and
        its expansion in the passage.  Silent when the passage carries both
        the acronym and its expansion.
    """
    _check_str("query", query), _check_str("passage", passage), _check_str("title", title)
    if isinstance(earlier_chunks, str):
        raise TypeError("earlier_chunks must be a sequence of str, not a str")
    sources: list[tuple[str, int | None, str]] = [("title", None, title)]
    for i, chunk in enumerate(earlier_chunks):
        sources.append(("earlier_chunk", i, _check_str(f"earlier_chunks[{i}]", chunk)))
    sources.append(("passage", None, passage))
    defs: dict[str, tuple[str, str, int | None]] = {}
    for where, idx, text in sources:
        for acr, exp in _definitions(text).items():
            defs.setdefault(acr, (exp, where, idx))
    out: list[Suggestion] = []
    for acr, (exp, where, idx) in defs.items():
        in_query, in_passage = _has_acronym(query, acr), _has_acronym(passage, acr)
        exp_in_passage = _contains(passage, exp)
        if not (in_query or in_passage) or (in_passage and exp_in_passage):
            continue
        spans = [sp for sp in re.finditer(rf"(?<![A-Za-z0-9]){re.escape(acr)}(?![A-Za-z0-9])", passage)]
        all_spans = sorted({m.span() for m in spans} | set(_find_all(passage, exp)))
        out.append(Suggestion("acronym",
                              {"acronym": acr, "expansion": exp, "defined_in": where, "chunk_index": idx,
                               "in_query": in_query, "in_passage": in_passage},
                              all_spans))
    return out


# --------------------------------------------------------------------------- all detectors


def suggest(
    query: str,
    passage: str,
    *,
    label: int | None = None,
    score: float | None = None,
    rank: int | None = None,
    title: str = "",
    earlier_chunks: Sequence[str] = (),
    language: str | None = None,
    term_frequencies: Mapping[str, int] | None = None,
    analyzer: Analyzer | None = None,
    overlap_threshold: float = 0.5,
    depth: int = 10,
    answers: Any = None,
) -> list[Suggestion]:
    """Run every detector applicable to one (query, passage) pair.

    The numeral, entity and syntactic detectors always run; term overlap
    needs ``label``; typos need ``term_frequencies``; false negative needs
    ``rank`` (and a label of 0 or none); main topic needs ``title``;
    coreference and acronym use ``title`` and ``earlier_chunks``.

    Parameters
    ----------
    query, passage : str
        The pair.
    label : int, optional
        The pair's graded label (0-3), if judged.
    score, rank : float, int, optional
        The pair's retrieval score and 1-based rank.
    title : str, optional
        The document title.
    earlier_chunks : sequence of str, optional
        Texts of the passages before this one in its document.
    language : {"en", "zh", "mixed"} or None, optional
        Detected from the texts when ``None``.
    term_frequencies : mapping, optional
        Collection word counts, for typos.
    analyzer : Analyzer, optional
        Defaults to :func:`core.text.analyzer_for` of the language.
    overlap_threshold : float, optional
        See :func:`detect_term_overlap`.
    depth : int, optional
        Rank cut-off for false-negative candidates.
    answers : str or list, optional
        The query's reference answers: a false-negative candidate must then
        contain one (see :func:`detect_false_negative`).

    Returns
    -------
    list of Suggestion
        Sorted by category id (stable within a category).
    """
    _check_str("query", query), _check_str("passage", passage), _check_str("title", title)
    lang = _resolve_language(language, query, passage)
    analyzer = analyzer or analyzer_for("en" if lang == "en" else "zh")
    out: list[Suggestion] = []
    out += detect_numeral_mismatch(query, passage)
    out += detect_entity_mismatch(query, passage, language=lang)
    out += detect_syntactic_mismatch(query, passage, analyzer=analyzer)
    if label is not None:
        out += detect_term_overlap(query, passage, label=label, threshold=overlap_threshold, analyzer=analyzer)
    if term_frequencies is not None:
        out += detect_typos(query, passage, term_frequencies)
    if rank is not None:
        out += detect_false_negative(label=label, rank=rank, score=score, depth=depth, answers=answers, passage=passage)
    if title.strip():
        out += detect_main_topic(query, passage, title, analyzer=analyzer)
    out += detect_coreference(query, passage, title=title, earlier_chunks=earlier_chunks, analyzer=analyzer)
    out += detect_acronym(query, passage, title=title, earlier_chunks=earlier_chunks)
    return sorted(out, key=lambda s: s.category)
