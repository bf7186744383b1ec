"""Text analysis for BM25 and highlighting: English, Chinese and mixed text.

An :class:`Analyzer` turns a text into index terms, and can say where each
term came from in the original text (character offsets), so that a page can
highlight query terms in a passage, Chinese included.

Pipeline
--------
1. **Normalisation**: Unicode NFKC, so full-width forms become ASCII
   (``"ＢＥＲＴ２０２３"`` -> ``"BERT2023"``, ``"，"`` -> ``","``) and
   compatibility characters are unfolded (``"ﬁ"`` -> ``"fi"``).  Offsets
   always point into the *original* text (see :meth:`Analyzer.tokenize_with_offsets`).
2. **Splitting** into runs, with one regular expression:

   * *CJK runs*: maximal runs of CJK ideographs (the blocks of
     :mod:`core.lang`) and Japanese kana.  Punctuation and spaces end a run.
   * *words*: a letter or digit followed by letters, digits and combining
     marks (``"école"``, Hebrew with points, Devanagari with vowel signs),
     possibly joined by inner apostrophes (``"don't"``, ``"O'Neil"``).
     Underscores, hyphens and other punctuation separate words.  Everything
     else (punctuation, symbols, spaces) is dropped.

3. **Words** follow the English rules whatever the analyzer: lowercase
   (``str.lower``), a possessive ``'s`` is removed and the remaining
   apostrophes are deleted (``"John's"`` -> ``"john"``, ``"don't"`` ->
   ``"dont"``), stopwords are removed (checked after lowercasing, before
   stemming), then Snowball English stemming with PyStemmer (``stem=True``).
4. **CJK runs** are split according to :attr:`Analyzer.cjk`:

   ``"unigram"``
       one term per character, as Lucene's StandardAnalyzer does (the
       English analyzer uses it, so a stray Chinese name in English text is
       still searchable).
   ``"jieba"``
       jieba word segmentation, precise mode (``jieba.cut``, HMM for unknown
       words on by default).  The default Chinese analyzer.
   ``"jieba_search"``
       jieba search mode (``jieba.cut_for_search``): the precise-mode words
       plus every dictionary 2- and 3-gram inside a longer word.
   ``"bigram"``
       overlapping CJK character bigrams (``"北京大学"`` -> ``"北京"``,
       ``"京大"``, ``"大学"``); a run of a single character gives that
       character as a unigram (Lucene's CJKBigramFilter without
       ``outputUnigrams``).  Needs no dictionary.

   Only CJK runs are given to jieba; Latin words and numbers inside Chinese
   text are handled by the word rules above (``"BERT模型2023年"`` ->
   ``bert``, ``模型``, ``2023``, ``年``).

Why not ``\\w+``
----------------
Python's ``\\w`` matches CJK ideographs, and Chinese has no spaces: ``\\w+``
makes a whole clause one token (``"印控克什米尔地区寺庙踩踏事故死亡人数"`` is
a single "word"), so a query matches a passage only when a full clause is
identical and recall collapses.  A CJK run must always be segmented.

Defaults, and why
-----------------
Chinese: jieba precise mode, HMM on, no Chinese stopword list.  On RGB zh
(BM25, 300 queries) search mode gained less than 0.01 on every measure, within
the noise, for 15 % more postings and 1.4x the analysis time; bigrams were
within 0.03 of jieba for 74 % more postings; bm25s's Chinese stopwords
lowered nDCG@10 (idf already down-weights function words).  Search mode and
bigrams stay available (``"jieba_search"``, ``"bigram"``, the latter
needing no dictionary).

English: ``stopwords="en"`` is bm25s's ``STOPWORDS_EN``, the 33-word stop
set of Lucene's ``EnglishAnalyzer``; ``"en_plus"`` is bm25s's 179-word
NLTK-derived ``STOPWORDS_EN_PLUS`` and ``"none"`` keeps every word.  On a
DBpedia subset the three are within 0.013 of nDCG@10 of each other and
stemming adds 0.046.
scikit-learn's ``ENGLISH_STOP_WORDS`` is not used: it is not a dependency and
its 318 words include content words ("system", "fire", "bill", "interest").

The measurements (tables, set-ups) are in ``benchmarks/analyzer_choices.md``.
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple, cast

from core.lang import CJK_IDEOGRAPH_CLASS

__all__ = [
    "ANALYZER_VERSION",
    "CJK_MODES",
    "STOPWORD_LISTS",
    "Analyzer",
    "analyzer_for",
    "highlight_spans",
    "merge_spans",
]

ANALYZER_VERSION = 1
"""Bumped whenever the analysis of some text changes, so that cached indexes are rebuilt."""

CJK_MODES = ("unigram", "bigram", "jieba", "jieba_search")
"""How an :class:`Analyzer` splits runs of CJK characters."""

STOPWORD_LISTS = ("en", "en_plus", "none")
"""Names accepted by :attr:`Analyzer.stopwords`."""

# --------------------------------------------------------------------------- character classes

# CJK ideographs: the blocks of core.lang.CJK_RANGES (Unified, extensions A to I,
# Compatibility; defined there once), plus the ideographic iteration/closing marks and Japanese kana.
_CJK_CLASS = (
    "\u3005-\u3007"  # 々 〆 〇
    "\u3021-\u3029"  # Hangzhou numerals
    "\u3031-\u3035"  # kana repeat marks
    "\u303b"
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff"  # Katakana (incl. prolonged sound mark)
    "\u31f0-\u31ff" + CJK_IDEOGRAPH_CLASS  # Katakana phonetic extensions
)
_APOSTROPHES = "'\u2019"


@lru_cache(maxsize=1)
def _combining_class() -> str:
    """A regex character class body of every combining mark (categories Mn, Mc, Me).

    Computed once from :mod:`unicodedata` (about 50 ms) rather than hard-coded,
    so it follows the Unicode version of the running Python.
    """
    ranges: list[tuple[int, int]] = []
    start = None
    category = unicodedata.category
    # No combining marks exist between U+1F000 and U+E00FF; U+E0100..U+E01EF are variation selectors.
    for cp in [*range(0x1F000), *range(0xE0100, 0xE01F0)]:
        is_mark = category(chr(cp))[0] == "M"
        if is_mark and start is None:
            start = cp
        elif not is_mark and start is not None:
            ranges.append((start, cp - 1))
            start = None
    if start is not None:
        ranges.append((start, 0xE01EF))
    return "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" if b > a else re.escape(chr(a)) for a, b in ranges)


class _Patterns(NamedTuple):
    runs: re.Pattern[str]  # group 1: a CJK run, group 2: a word
    word: re.Pattern[str]  # a word (no CJK in the text)
    simple: re.Pattern[str]  # a word in text without CJK, combining marks or apostrophes
    special: re.Pattern[str]  # a CJK character, a combining mark or an apostrophe
    cjk: re.Pattern[str]  # a CJK character


@lru_cache(maxsize=1)
def _patterns() -> _Patterns:
    marks = _combining_class()
    letter = rf"[^\W_{_CJK_CLASS}]"  # \w minus underscore minus CJK
    # letters/digits with combining marks after them, apostrophe-joined parts;
    # written so that plain letters go through one fast "letter+" loop
    part = rf"{letter}+(?:[{marks}]+{letter}*)*"
    word = rf"{part}(?:[{_APOSTROPHES}]{part})*"
    return _Patterns(
        runs=re.compile(rf"([{_CJK_CLASS}]+)|({word})"),
        word=re.compile(word),
        # without CJK, marks and apostrophes, `word` reduces to this
        simple=re.compile(r"[^\W_]+"),
        special=re.compile(rf"[{_CJK_CLASS}{marks}{_APOSTROPHES}]"),
        cjk=re.compile(rf"[{_CJK_CLASS}]"),
    )


_POSSESSIVE = re.compile(rf"[{_APOSTROPHES}]s$")
_APOSTROPHE_RE = re.compile(rf"[{_APOSTROPHES}]")


def _strip_apostrophes(word: str) -> str:
    """Drop a possessive ``'s`` and then every apostrophe (``"john's"`` -> ``"john"``, ``"don't"`` -> ``"dont"``)."""
    return _APOSTROPHE_RE.sub("", _POSSESSIVE.sub("", word))


# --------------------------------------------------------------------------- normalisation


class _NFKCCharTable(dict):  # type: ignore[type-arg]
    """``str.translate`` table mapping a code point to its NFKC form, filled on demand."""

    def __missing__(self, cp: int) -> str:
        value = unicodedata.normalize("NFKC", chr(cp))
        self[cp] = value
        return value


_NFKC_TABLE = _NFKCCharTable()


def _normalize(text: str) -> tuple[str, list[int] | None, list[int] | None]:
    """NFKC-normalise ``text`` and map every normalised character back to the original.

    Returns ``(normalised, starts, ends)``: character ``i`` of ``normalised``
    came from ``text[starts[i]:ends[i]]``.  ``starts``/``ends`` are ``None``
    when the mapping is the identity (same length, character by character),
    which covers ASCII, already normalised text and the usual full-width
    forms, without a Python loop.
    """
    same = _normalized_in_place(text)
    if same is not None:
        return same, None, None
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for i, j, piece in _nfkc_clusters(text):
        out.append(piece)
        starts.extend([i] * len(piece))
        ends.extend([j] * len(piece))
    return "".join(out), starts, ends


def _normalized(text: str) -> str:
    """The normalised text of :func:`_normalize` alone (indexing needs no map back to ``text``)."""
    same = _normalized_in_place(text)
    if same is not None:
        return same
    return "".join(piece for _, _, piece in _nfkc_clusters(text))


def _normalized_in_place(text: str) -> str | None:
    """NFKC of ``text`` when it maps character by character (same length, same places), else ``None``."""
    if text.isascii():
        return text
    whole = unicodedata.normalize("NFKC", text)
    if whole == text or (len(whole) == len(text) and text.translate(_NFKC_TABLE) == whole):
        return whole
    return None


def _nfkc_clusters(text: str) -> Iterator[tuple[int, int, str]]:
    """``(start, end, nfkc)`` per cluster of ``text``, in order.

    A cluster is a base character with the combining marks and Hangul
    vowel/final jamo that follow it, which is what NFKC composes; normalising
    cluster by cluster lets each output character be mapped to its cluster.
    """
    n = len(text)
    i = 0
    while i < n:
        j = i + 1
        while j < n and (unicodedata.combining(text[j]) or "\u1160" <= text[j] <= "\u11ff"):
            j += 1
        yield i, j, unicodedata.normalize("NFKC", text[i:j])
        i = j


# --------------------------------------------------------------------------- resources


@lru_cache(maxsize=4)
def _stopword_set(name: str) -> frozenset[str]:
    if name == "none":
        return frozenset()
    from bm25s.stopwords import STOPWORDS_EN, STOPWORDS_EN_PLUS

    return frozenset(STOPWORDS_EN if name == "en" else STOPWORDS_EN_PLUS)


_STEMMERS = threading.local()
_STEM_CACHE_SIZE = 1_000_000


def _stemmer() -> Any:
    """The Snowball English stemmer (PyStemmer objects are not thread-safe: one per thread)."""
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        import Stemmer

        stemmer = Stemmer.Stemmer("english")
        _STEMMERS.english = stemmer
        _STEMMERS.cache = {}
    return stemmer


def _stem_words(words: list[str]) -> list[str]:
    """Snowball English stems of ``words``, through a per-thread word -> stem cache.

    Stemming each distinct word once (as bm25s does for its vocabulary) is
    about 4x faster than stemming every token.
    """
    stemmer = _stemmer()
    cache: dict[str, str] = _STEMMERS.cache
    stems = list(map(cache.get, words))
    if None in stems:
        missing = list({w for w, stem in zip(words, stems) if stem is None})
        if len(cache) + len(missing) > _STEM_CACHE_SIZE:
            cache.clear()
        cache.update(zip(missing, stemmer.stemWords(missing)))
        return list(map(cache.__getitem__, words))
    return cast(list[str], stems)  # no None among them: every word was cached


_JIEBA_LOCK = threading.Lock()
_JIEBA_CACHE_SIZE = 65_536  # runs; a few tens of MB at most
_JIEBA: Any = None


def _jieba() -> Any:
    """A private, initialised ``jieba.Tokenizer`` on the default dictionary (created once, quietly).

    A private instance keeps words that other code adds to jieba's global
    tokenizer (``jieba.add_word``) from changing pooljudge's segmentation.
    """
    global _JIEBA
    if _JIEBA is None:
        with _JIEBA_LOCK:
            if _JIEBA is None:
                import jieba

                jieba.setLogLevel(logging.WARNING)  # jieba logs its dictionary loading to stderr at DEBUG
                tokenizer = jieba.Tokenizer()
                tokenizer.initialize()
                _JIEBA = tokenizer
    return _JIEBA


@lru_cache(maxsize=_JIEBA_CACHE_SIZE)
def _jieba_words(run: str, hmm: bool) -> tuple[str, ...]:
    """jieba's precise-mode words of a CJK ``run``, cached: a corpus repeats runs (RGB zh: 23% of its characters)."""
    return tuple(_jieba().cut(run, HMM=hmm))


def _jieba_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("jieba")
    except PackageNotFoundError:  # pragma: no cover
        return "unknown"


def _stemmer_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("PyStemmer")
    except PackageNotFoundError:  # pragma: no cover
        return "unknown"


# --------------------------------------------------------------------------- the analyzer


@dataclass(frozen=True)
class Analyzer:
    """Turns text into index terms; see the module docstring for the pipeline.

    Parameters
    ----------
    cjk : str
        How runs of CJK characters are split: ``"unigram"`` (one term per
        character, the English analyzer), ``"jieba"`` (precise-mode word
        segmentation), ``"jieba_search"`` (jieba search mode) or ``"bigram"``
        (overlapping character bigrams).
    stem : bool
        Snowball English stemming of words (PyStemmer); on by default.
    stopwords : str
        English stopword list removed from words: ``"en"`` (bm25s/Lucene, 33
        words, default), ``"en_plus"`` (bm25s, 179 words) or ``"none"``.
    hmm : bool
        Let jieba guess unknown words with its HMM (jieba's default); only
        used by the jieba modes.

    Examples
    --------
    >>> Analyzer().tokenize("The runners' models were running")
    ['runner', 'model', 'were', 'run']
    >>> Analyzer(cjk="bigram").tokenize("北京大学，BERT")
    ['北京', '京大', '大学', 'bert']
    """

    cjk: str = "unigram"
    stem: bool = True
    stopwords: str = "en"
    hmm: bool = True

    def __post_init__(self) -> None:
        if self.cjk not in CJK_MODES:
            raise ValueError(f"cjk must be one of {', '.join(CJK_MODES)}, got {self.cjk!r}")
        if self.stopwords not in STOPWORD_LISTS:
            raise ValueError(f"stopwords must be one of {', '.join(STOPWORD_LISTS)}, got {self.stopwords!r}")
        if not isinstance(self.stem, bool) or not isinstance(self.hmm, bool):
            raise TypeError("stem and hmm must be booleans")

    # ----------------------------------------------------------------- description

    @property
    def language(self) -> str:
        """``"en"`` for the English analyzer (CJK unigrams), ``"zh"`` for the Chinese ones."""
        return "en" if self.cjk == "unigram" else "zh"

    @property
    def params(self) -> dict[str, Any]:
        """Everything that determines the output, as a JSON-serialisable dict (for cache keys)."""
        params: dict[str, Any] = {
            "analyzer": "pooljudge",
            "version": ANALYZER_VERSION,
            "normalization": "NFKC",
            "lowercase": True,
            "cjk": self.cjk,
            "stopwords": self.stopwords,
            "stem": "snowball-english" if self.stem else None,
            "unicode": unicodedata.unidata_version,
        }
        if self.stem:
            params["pystemmer"] = _stemmer_version()
        if self.cjk.startswith("jieba"):
            params["jieba"] = _jieba_version()
            params["hmm"] = self.hmm
        return params

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Analyzer:
        """Rebuild an analyzer from :attr:`params` (library versions are not checked)."""
        if params.get("analyzer") != "pooljudge":
            raise ValueError(f"not the parameters of a pooljudge analyzer: {params!r}")
        if params.get("version") != ANALYZER_VERSION:
            raise ValueError(
                f"analyzer version {params.get('version')!r} is not this one ({ANALYZER_VERSION}); rebuild the index"
            )
        return cls(
            cjk=params["cjk"],
            stem=params["stem"] is not None,
            stopwords=params["stopwords"],
            hmm=bool(params.get("hmm", True)),
        )

    # ----------------------------------------------------------------- analysis

    def tokenize(self, text: str) -> list[str]:
        """The index terms of ``text``, in text order.

        Parameters
        ----------
        text : str
            Any text.

        Returns
        -------
        list[str]
            Terms; repeated terms are repeated (term frequency matters to BM25).
            Always equal to the terms of :meth:`tokenize_with_offsets`; this
            is the fast path used for indexing.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        norm = _normalized(text)
        patterns = _patterns()
        # Three paths giving the same terms: CJK -> the general path (spans into `norm`, no map back);
        # apostrophes or combining marks -> the full word pattern; else the simple one.
        if norm.isascii() or max(norm) < "\u0300":  # no CJK, no combining marks
            full = "'" in norm or "\u2019" in norm
        else:
            special = patterns.special.search(norm)
            if special is not None and patterns.cjk.search(norm, special.start()) is not None:
                return [term for term, _, _ in self._spans(norm)]
            full = special is not None
        stop = _stopword_set(self.stopwords)
        if full:
            words = [w.lower() for w in patterns.word.findall(norm)]
            words = [_strip_apostrophes(w) if "'" in w or "\u2019" in w else w for w in words]
            words = [w for w in words if w and w not in stop]
        else:
            words = [w.lower() for w in patterns.simple.findall(norm)]
            if stop:
                words = [w for w in words if w not in stop]
        return _stem_words(words) if self.stem and words else words

    def tokenize_with_offsets(self, text: str) -> list[tuple[str, int, int]]:
        """The index terms of ``text`` with the character span each came from.

        Parameters
        ----------
        text : str
            Any text.

        Returns
        -------
        list[tuple[str, int, int]]
            ``(term, start, end)`` where ``text[start:end]`` is the original
            substring (before normalisation, lowercasing and stemming) the
            term was made from.  Sorted by ``start`` except that
            ``"jieba_search"`` emits the sub-words of a long word before the
            word itself (same order as :meth:`tokenize`).
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        norm, starts, ends = _normalize(text)
        out = self._spans(norm)
        if starts is not None and ends is not None:
            out = [(t, starts[s], ends[e - 1]) for t, s, e in out]
        return out

    def _spans(self, norm: str) -> list[tuple[str, int, int]]:
        """``(term, start, end)`` of the normalised text ``norm``, spans into ``norm``."""
        stop = _stopword_set(self.stopwords)
        out: list[tuple[str, int, int]] = []
        word_slots: list[int] = []  # indexes in `out` holding words to stem
        for m in _patterns().runs.finditer(norm):
            s, e = m.span()
            if m.lastindex == 2:
                word = m.group().lower()
                if "'" in word or "\u2019" in word:
                    word = _strip_apostrophes(word)
                if not word or word in stop:
                    continue
                word_slots.append(len(out))
                out.append((word, s, e))
            else:
                self._segment_cjk(m.group(), s, out)
        if self.stem and word_slots:
            stems = _stem_words([out[i][0] for i in word_slots])
            for i, stem in zip(word_slots, stems):
                _, s, e = out[i]
                out[i] = (stem, s, e)
        return out

    def _segment_cjk(self, run: str, offset: int, out: list[tuple[str, int, int]]) -> None:
        mode = self.cjk
        if mode == "unigram":
            out.extend((ch, offset + i, offset + i + 1) for i, ch in enumerate(run))
        elif mode == "bigram":
            if len(run) == 1:
                out.append((run, offset, offset + 1))
            else:
                out.extend((run[i : i + 2], offset + i, offset + i + 2) for i in range(len(run) - 1))
        elif mode == "jieba":
            pos = offset
            for word in _jieba_words(run, self.hmm):
                out.append((word, pos, pos + len(word)))
                pos += len(word)
        else:  # jieba_search
            out.extend((w, offset + s, offset + e) for w, s, e in _jieba().tokenize(run, mode="search", HMM=self.hmm))

    def tokenize_many(self, texts: Iterable[str]) -> list[list[str]]:
        """:meth:`tokenize` applied to each text."""
        return [self.tokenize(t) for t in texts]


def analyzer_for(language: str, *, chinese: str = "jieba", stem: bool = True) -> Analyzer:
    """The analyzer for a collection language.

    Parameters
    ----------
    language : str
        ``"en"`` gives the English analyzer (CJK characters as unigrams);
        ``"zh"`` and ``"mixed"`` give the Chinese analyzer, which is also a
        mixed analyzer: CJK runs are segmented, Latin words and numbers follow
        the English rules, so on text without CJK characters it produces the
        same terms as the English analyzer.
    chinese : str, optional
        Segmentation of CJK runs for ``"zh"``/``"mixed"``: ``"jieba"``
        (default), ``"jieba_search"`` or ``"bigram"``.
    stem : bool, optional
        Snowball English stemming of words (default ``True``).

    Returns
    -------
    Analyzer

    Raises
    ------
    ValueError
        For an unknown language or Chinese segmentation.
    """
    if chinese not in ("jieba", "jieba_search", "bigram"):
        raise ValueError(f"chinese must be 'jieba', 'jieba_search' or 'bigram', got {chinese!r}")
    if language == "en":
        return Analyzer(cjk="unigram", stem=stem)
    if language in ("zh", "mixed"):
        return Analyzer(cjk=chinese, stem=stem)
    raise ValueError(f"language must be 'en', 'zh' or 'mixed', got {language!r}")


# --------------------------------------------------------------------------- highlighting


def merge_spans(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sort spans and merge those that overlap or touch (``(0, 2)`` and ``(2, 4)`` give ``(0, 4)``)."""
    merged: list[list[int]] = []
    for s, e in sorted(spans):
        if merged and s <= merged[-1][1]:
            if e > merged[-1][1]:
                merged[-1][1] = e
        else:
            merged.append([s, e])
    return [(s, e) for s, e in merged]


def highlight_spans(
    query: str, text: str, analyzer: Analyzer, *, ignore: Collection[str] = frozenset()
) -> list[tuple[int, int]]:
    """Character spans of ``text`` whose terms match a term of ``query``.

    Both sides go through the same ``analyzer``, so matching is on analysed
    terms: ``"running"`` highlights ``"runs"`` (both stem to ``run``), and a
    Chinese query highlights the jieba words or bigrams it shares with the
    passage.

    Parameters
    ----------
    query : str
        The query text.
    text : str
        The passage text to highlight.
    analyzer : Analyzer
        The analyzer the collection was indexed with.
    ignore : collection of str, optional
        Analysed terms never highlighted (e.g. Chinese function words such
        as 的 and 是, which the retrieval analyzer keeps on purpose).

    Returns
    -------
    list[tuple[int, int]]
        Sorted ``(start, end)`` spans into ``text``, overlapping or touching
        spans merged (``text[start:end]`` is what to highlight).
    """
    wanted = set(analyzer.tokenize(query)).difference(ignore)
    tokens = analyzer.tokenize_with_offsets(text)
    words = [(s, e) for term, s, e in tokens if term in wanted]
    # a common run starting or ending with a function word of the passage's own segmentation (故宫是 in
    # 故宫/是/明朝) loses it; a character inside a longer word (除 of 除夕夜) is no function word
    ignored = [(s, e) for term, s, e in tokens if term in ignore]
    starting = {s: e for s, e in ignored}
    ending = {e: s for s, e in ignored}
    for start, end in common_cjk_runs(query, text):
        while start in starting and starting[start] <= end:
            start = starting[start]
        while end in ending and ending[end] >= start:
            end = ending[end]
        if end - start >= 2:
            words.append((start, end))
    return merge_spans(words)


def common_cjk_runs(query: str, text: str, *, min_length: int = 2) -> list[tuple[int, int]]:
    """Spans of ``text`` whose CJK characters also occur, in the same order, in ``query``: the longest common runs.

    Word segmentation differs between a short query and a passage (jieba
    reads 除夕为什么要吃饺子 as ... 吃饺子 and a passage's 包饺子吃 as ...
    饺子 吃), so matching whole words misses shared words; matching runs of
    characters does not.  From each CJK character of ``text`` the run is
    extended as long as it is still a substring of a CJK run of ``query``;
    runs shorter than ``min_length`` characters (single characters match too
    much to mean anything) are dropped.  Both texts are NFKC-normalised
    first, as the analyzers do.  :func:`highlight_spans` adds these runs to
    its word matches.

    Returns
    -------
    list[tuple[int, int]]
        ``(start, end)`` spans into ``text``, sorted, overlapping or touching ones merged.
    """
    if min_length < 1:
        raise ValueError(f"min_length must be at least 1, got {min_length}")
    cjk_run = _cjk_runs()
    # runs joined by a non-CJK separator: a substring of this is a substring of one query run
    query_runs = "\n".join(m.group() for m in cjk_run.finditer(_normalized(query)))
    if len(query_runs) < min_length:
        return []
    normalised, starts, ends = _normalize(text)
    spans = []
    for m in cjk_run.finditer(normalised):
        run, offset = m.group(), m.start()
        for i in range(len(run) - min_length + 1):
            j = i + min_length
            if run[i:j] not in query_runs:
                continue
            while j < len(run) and run[i : j + 1] in query_runs:
                j += 1
            a, b = offset + i, offset + j
            spans.append((a, b) if starts is None or ends is None else (starts[a], ends[b - 1]))
    return merge_spans(spans)


@lru_cache(maxsize=1)
def _cjk_runs() -> re.Pattern[str]:
    return re.compile(f"[{_CJK_CLASS}]+")


# Public names for the pieces other modules build on (the detectors' part-of-speech
# tagging shares this jieba instance and this normalisation).
jieba_tokenizer = _jieba
normalize_with_offsets = _normalize
