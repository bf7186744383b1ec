"""``entity_mismatch``: the passage is about another named entity than the query (DuReader-retrieval).

Chinese: proper nouns from jieba part-of-speech tags (``nr`` person, ``ns``
place, ``nt`` organisation, ``nz`` other proper noun and their sub-tags), two
characters or more.  The four tags are one class, because jieba's tags
between them are unreliable (``淘宝`` is ``nz`` but ``支付宝`` is ``nr``).
English: runs of capitalised words (``"New York Times"``), a single
capitalised word only when not sentence-initial, leading ``The`` and
function words dropped.  Fires when a query entity does not occur in the
passage **and** the passage has an entity that does not occur in the query
(case-insensitive substring tests).

Kinded names come first (:mod:`~core.detectors.names`: the packaged list of
brand, product, site and place names jieba misses, plus a collection's
lexicon): a query name of kind K absent from the passage while the passage
has another name of kind K (two liquor brands, two phone makers) is a
mismatch, evidence ``method`` ``"name_list"`` or ``"lexicon"`` and ``kind``
K.  Names of different kinds are never compared there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from core.detectors.base import (
    Detector,
    Evidence,
    Span,
    Suggestion,
    check_str,
    contains,
    listing,
    pos_tokens,
    resolve_language,
    unique,
)
from core.detectors.names import find_names


@dataclass(frozen=True, slots=True, eq=False)
class EntityEvidence(Evidence):
    """Evidence of ``entity_mismatch``: the query entities missing from the passage, the passage's other entities."""

    query: tuple[str, ...] = ()
    passage: tuple[str, ...] = ()
    method: str = "capitalisation"  # or "jieba_pos", "name_list", "lexicon"
    kind: str | None = None  # the names' kind, for "name_list" and "lexicon"
    optional: ClassVar[frozenset[str]] = frozenset({"kind"})

    def summary(self) -> str:
        kind = f" ({self.kind})" if self.kind else ""
        return f"query entity {listing(self.query)}{kind} not in the passage; passage has {listing(self.passage)}"


_ZH_ENTITY_TAGS = ("nr", "ns", "nt", "nz")


def _zh_entities(text: str) -> list[tuple[str, str, Span]]:
    return [t for t in pos_tokens(text) if t[1].startswith(_ZH_ENTITY_TAGS) and len(t[0]) >= 2]


_CAP_WORD = re.compile(r"[A-Z][A-Za-z0-9'’&.-]*")
EN_NOT_NAMES = frozenset(
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
        if _CAP_WORD.fullmatch(tok) and tok.lower() not in EN_NOT_NAMES:
            j = i
            words = [i]
            while j + 1 < len(tokens):
                nxt = tokens[j + 1].group()
                if _CAP_WORD.fullmatch(nxt) and nxt.lower() not in EN_NOT_NAMES:
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


# A query name counts as mentioned when the passage has one of its distinctive words (Tesla for Nikola Tesla,
# Everest for Mount Everest) or the place its adjective is made from (Rome for Roman, Europe for European,
# Germany for German): on the dev half of the real pairs these were most of the English false positives,
# passages about the query's own subject.
_GENERIC_NAME_WORDS = frozenset(
    "mount great grand united kingdom states republic north south east west new saint lake river sea island "
    "city university prix cup world national international company brothers wall the of".split()
)
_DEMONYM = re.compile(r"^([A-Z][a-z]{2,}?)(?:ean|ian|an|ese|ish|ic)$")


def _mentioned(name: str, passage: str) -> bool:
    """Whether ``passage`` mentions query name ``name``: whole, by a distinctive word, or by its adjective's stem."""
    if contains(passage, name):
        return True
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z'’-]+", name) if len(w) >= 4]
    for word in words:
        if word.lower() not in _GENERIC_NAME_WORDS and len(words) > 1:
            if re.search(rf"(?<![^\W_]){re.escape(word)}(?![^\W_])", passage, re.IGNORECASE):
                return True
    stem = _DEMONYM.match(name)
    return bool(stem) and re.search(rf"(?<![^\W_]){stem.group(1)}[a-z]*", passage) is not None  # type: ignore[union-attr]


def _kinded_mismatch(query: str, passage: str, lexicon: Mapping[str, str] | None) -> list[Suggestion]:
    """A listed (or lexicon) query name of kind K missing from the passage, which names another of kind K."""
    q_names, p_names = find_names(query, lexicon), find_names(passage, lexicon)
    for kind in unique(k for _, k, _, _ in q_names):
        missing = [(n, own) for n, k, _, own in q_names if k == kind and not contains(passage, n)]
        other = [(n, sp, own) for n, k, sp, own in p_names if k == kind and not contains(query, n)]
        if missing and other:
            own = any(o for _, o in missing) or any(o for _, _, o in other)
            evidence = EntityEvidence(
                tuple(unique(n for n, _ in missing)),
                tuple(unique(n for n, _, _ in other)),
                "lexicon" if own else "name_list",
                kind,
            )
            return [Suggestion("entity_mismatch", evidence, sorted({sp for _, sp, _ in other}))]
    return []


def detect_entity_mismatch(
    query: str, passage: str, *, language: str | None = None, lexicon: Mapping[str, str] | None = None
) -> list[Suggestion]:
    """A query entity absent from the passage, which names another entity (DuReader-retrieval Table 10).

    Parameters
    ----------
    query, passage : str
        The pair.
    language : {"en", "zh", "mixed"} or None, optional
        ``None`` detects it (Chinese when either text is Chinese).
    lexicon : mapping, optional
        A collection's own names, ``{name: kind}``, added to the packaged list.

    Returns
    -------
    list of Suggestion
        At most one ``entity_mismatch`` suggestion, evidence
        ``{"query": [...], "passage": [...], "method": "jieba_pos" | "capitalisation"}``
        (or ``"name_list"`` / ``"lexicon"`` with ``"kind"``),
        spans on the passage's other entities.

    Examples
    --------
    >>> detect_entity_mismatch("淘宝修改实名认证", "支付宝实名认证怎么修改")[0].evidence["query"]
    ['淘宝']
    """
    check_str("query", query), check_str("passage", passage)
    lang = resolve_language(language, query, passage)
    kinded = _kinded_mismatch(query, passage, lexicon)
    if kinded:
        return kinded
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
    missing = unique(w for w, _ in q_ents if not _mentioned(w, passage))
    other = [(w, sp) for w, sp in p_ents if not contains(query, w)]
    if not missing or not other:
        return []
    return [
        Suggestion(
            "entity_mismatch",
            EntityEvidence(tuple(missing), tuple(unique(w for w, _ in other)), method),
            sorted({sp for _, sp in other}),
        )
    ]


DETECTOR = Detector(
    "entities",
    "entity_mismatch",
    ("query", "passage", "language", "lexicon"),
    (),
    lambda pair: detect_entity_mismatch(pair.query, pair.passage, language=pair.language, lexicon=pair.lexicon),
    EntityEvidence,
)
