"""BM25 retrieval over analysed text: bm25s (default) or rank_bm25 (for parity).

``BM25Retriever(analyzer).index(doc_ids, texts)`` analyses every passage with
a :class:`core.text.Analyzer`, gives the term lists to the backend and
answers queries through the one retriever protocol
(:class:`core.retrieval.base.Retriever`).

Scoring
-------
For a query ``q`` (a list of terms; a repeated term counts once per
occurrence) and a document ``d`` of length ``|d|`` (its number of terms) in a
collection of ``N`` documents with mean length ``avgdl``::

    score(q, d) = sum_{t in q} idf(t) * tfc(tf(t, d), |d|)

The variants are those of Kamphuis, de Vries, Boytsov & Lin, "Which BM25 do
you mean? A large-scale reproducibility study of scoring variants", ECIR 2020,
as implemented by bm25s (``method`` picks ``tfc``, ``idf_method`` picks
``idf``, by default the same as ``method``)::

    L           = 1 - b + b * |d| / avgdl
    robertson   tfc = tf / (k1 * L + tf)              idf = log((N - df + 0.5) / (df + 0.5)), floored at 0
    lucene      tfc = tf / (k1 * L + tf)              idf = log(1 + (N - df + 0.5) / (df + 0.5))
    atire       tfc = tf * (k1 + 1) / (tf + k1 * L)   idf = log(N / df)
    bm25l       c = tf / L, tfc = (k1 + 1)(c + delta) / (k1 + c + delta)
                                                      idf = log((N + 1) / (df + 0.5))
    bm25+       tfc = tf * (k1 + 1) / (k1 * L + tf) + delta
                                                      idf = log((N + 1) / df)

For ``bm25l`` and ``bm25+`` a document without any query term still gets
``sum_t idf(t) * tfc(0)``; that constant is part of every score.

rank_bm25 backend (``backend="rank_bm25"``)
-------------------------------------------
``method="okapi"`` (the default with this backend) is ``rank_bm25.BM25Okapi``:
the ATIRE ``tfc`` with idf ``log(N - df + 0.5) - log(df + 0.5)``, where every
*negative* idf (terms in more than half of the documents) is replaced by
``epsilon * mean idf`` (the mean over the whole vocabulary, negative values
included); ``epsilon=0.25`` by default.  ``avgdl`` is the total number of
terms divided by ``N`` (empty documents included), exactly as bm25s computes
it.  Hence, **with ``epsilon=0``, ``BM25Okapi`` equals bm25s
``method="atire", idf_method="robertson"``** (same ``k1``, ``b``): both floor
the idf at 0.  The test suite checks this to 1e-6 on the DBpedia subset with
``dtype="float64"`` (bm25s stores float32 scores by default, which agree to
about 1e-7 relative).  ``method="bm25l"`` and ``"bm25+"`` map to
``rank_bm25.BM25L``/``BM25Plus`` (with this retriever's ``delta``, 0.5 by
default, where ``BM25Plus`` alone would use 1).  ``BM25Plus`` equals bm25s
``method="bm25+"`` (checked to 1e-6 too); rank_bm25's ``BM25L`` multiplies
each term's weight by ``tf`` (unlike bm25s and Lv & Zhai, CIKM 2011), so the
two ``bm25l`` differ.

What a search returns
---------------------
Only documents that match: a hit has a score above the query's baseline
(0, or the constant ``sum_t idf(t) * tfc(0)`` of ``bm25l``/``bm25+``).  When
fewer than ``k`` documents match, fewer than ``k`` hits come back: no
zero-score padding and never an invented id.  A document that contains only
query terms whose idf is 0 (robertson idf of a term in at least half of the
documents, atire idf of a term in every document) scores 0 and is not
returned either: it carries no evidence.

Hits are in trec_eval order (:mod:`core.ranking`): score descending,
compared as 32-bit floats whatever the backend's precision, ties by doc id
descending (code point order, which is UTF-8 byte order).  Ties at the ``k``-th place are
resolved the same way, so the top ``k`` are exactly the first ``k`` documents
of the full ranking in that order.  Scores are the backend's: float32 for
bm25s by default (``dtype="float64"`` for exact parity), float64 for
rank_bm25.

Saving
------
``save(folder)`` writes ``meta.json`` (format, doc ids, analyzer parameters,
BM25 parameters) and, for bm25s, its own files (``bm25s.BM25.save``: the CSC
score matrix as ``.npy`` plus ``vocab.index.json`` and ``params.index.json``)
under ``folder/bm25s``; for rank_bm25, which has no save format, the term ids
of every document (``corpus_terms.npy``, ``corpus_offsets.npy``,
``vocab.json``) from which the index is rebuilt on load.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from core.ranking import trec_argsort, trec_scores
from core.retrieval.base import Hit, IndexedPassages, ProgressCallback
from core.retrieval.persistence import check_doc_ids, read_saved_index, write_json
from core.text import Analyzer
from core.types import Passage, Run
from core.validators import positive_int, real_number

__all__ = ["BM25Retriever", "BM25S_METHODS", "RANK_BM25_METHODS", "BACKENDS"]

BACKENDS = ("bm25s", "rank_bm25")
BM25S_METHODS = ("robertson", "lucene", "atire", "bm25l", "bm25+")
"""``method`` / ``idf_method`` values of the bm25s backend."""
RANK_BM25_METHODS = ("okapi", "bm25l", "bm25+")
"""``method`` values of the rank_bm25 backend (``BM25Okapi``, ``BM25L``, ``BM25Plus``)."""

_FORMAT = "pooljudge-bm25"
_FORMAT_VERSION = 1
_DTYPES = ("float32", "float64")


def _progress_step(total: int) -> int:
    """Report progress about 200 times over ``total`` items."""
    return max(1, total // 200)


class BM25Retriever(IndexedPassages):
    """BM25 over the terms of a :class:`~core.text.Analyzer` (see the module docstring).

    Parameters
    ----------
    analyzer : Analyzer
        Analyses passages and queries (``core.text.analyzer_for(language)``).
    k1, b : float
        Term-frequency saturation and length normalisation (1.5, 0.75).
    method : str, optional
        bm25s: ``"lucene"`` (default), ``"robertson"``, ``"atire"``,
        ``"bm25l"``, ``"bm25+"``.  rank_bm25: ``"okapi"`` (default),
        ``"bm25l"``, ``"bm25+"``.
    idf_method : str, optional
        bm25s only: the idf variant, by default the same as ``method``.
    delta : float
        The ``delta`` of BM25L and BM25+ (0.5).
    epsilon : float
        rank_bm25 ``BM25Okapi`` only: negative idfs become ``epsilon *
        mean idf`` (0.25, rank_bm25's default; 0 floors them at 0).
    backend : {"bm25s", "rank_bm25"}
        ``"bm25s"`` (sparse precomputed scores, fast) or ``"rank_bm25"``
        (scans every document per query term; kept for parity checks).
    dtype : {"float32", "float64"}
        bm25s score precision (float32, bm25s's default).
    name : str
        The run name (``"bm25"``).

    Examples
    --------
    >>> from core.text import analyzer_for
    >>> r = BM25Retriever(analyzer_for("en")).index(["a", "b"], ["red apples", "green pears"])
    >>> [h.doc_id for h in r.search("apple")]
    ['a']
    """

    kind = "bm25"
    context: str | None = None
    """The passage context its texts are indexed with (set by :mod:`pooljudge.retrievers`); ``None``: the corpus default."""

    def __init__(
        self,
        analyzer: Analyzer,
        *,
        k1: float = 1.5,
        b: float = 0.75,
        method: str | None = None,
        idf_method: str | None = None,
        delta: float = 0.5,
        epsilon: float = 0.25,
        backend: str = "bm25s",
        dtype: str = "float32",
        name: str = "bm25",
    ) -> None:
        if not isinstance(analyzer, Analyzer):
            raise TypeError(f"analyzer must be a core.text.Analyzer, got {type(analyzer).__name__}")
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
        real_number(k1, "k1", low=0)
        real_number(b, "b", low=0, high=1)
        real_number(delta, "delta")
        real_number(epsilon, "epsilon")
        if backend == "bm25s":
            method = "lucene" if method is None else method
            if method not in BM25S_METHODS:
                raise ValueError(f"method must be one of {', '.join(BM25S_METHODS)} with bm25s, got {method!r}")
            if idf_method is not None and idf_method not in BM25S_METHODS:
                raise ValueError(f"idf_method must be one of {', '.join(BM25S_METHODS)}, got {idf_method!r}")
            idf_method = method if idf_method is None else idf_method
        else:
            method = "okapi" if method is None else method
            if method not in RANK_BM25_METHODS:
                raise ValueError(f"method must be one of {', '.join(RANK_BM25_METHODS)} with rank_bm25, got {method!r}")
            if idf_method is not None:
                raise ValueError("idf_method is a bm25s option; rank_bm25 fixes the idf of each method")
        if dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(_DTYPES)}, got {dtype!r}")
        if not isinstance(name, str) or not name:
            raise ValueError("name must be a non-empty str")
        self.analyzer = analyzer
        self.k1 = float(k1)
        self.b = float(b)
        self.method: str = method
        self.idf_method: str | None = idf_method
        self.delta = float(delta)
        self.epsilon = float(epsilon)
        self.backend = backend
        self.dtype = dtype
        self.name = name
        self._doc_ids: list[str] | None = None
        self._rank: np.ndarray | None = None  # rank of each doc id in ascending code point order
        self._vocab: dict[str, int] = {}
        self._bm25s: Any = None
        self._rank_bm25: Any = None
        self._corpus_ids: list[list[int]] | None = None  # rank_bm25 only (for saving)

    # ------------------------------------------------------------------ description

    @property
    def params(self) -> dict[str, Any]:
        """The BM25 parameters (JSON-serialisable; with :attr:`Analyzer.params` they define the index)."""
        params: dict[str, Any] = {
            "backend": self.backend,
            "method": self.method,
            "k1": self.k1,
            "b": self.b,
        }
        if self.backend == "bm25s":
            params["idf_method"] = self.idf_method
            params["dtype"] = self.dtype
        if self.method in ("bm25l", "bm25+"):
            params["delta"] = self.delta
        if self.backend == "rank_bm25" and self.method == "okapi":
            params["epsilon"] = self.epsilon
        return params

    def __repr__(self) -> str:
        return f"BM25Retriever(name={self.name!r}, {self.params}, cjk={self.analyzer.cjk!r}, {self._size_text()})"

    @property
    def vocabulary_size(self) -> int:
        """Number of distinct terms in the index."""
        return len(self._vocab)

    # ------------------------------------------------------------------ building

    def index(
        self, doc_ids: Sequence[str], texts: Sequence[str], progress: ProgressCallback | None = None
    ) -> BM25Retriever:
        """Analyse ``texts`` and index them under ``doc_ids``.

        Parameters
        ----------
        doc_ids : Sequence[str]
            Unique, non-empty passage ids.
        texts : Sequence[str]
            The passage texts, aligned with ``doc_ids``.
        progress : callable, optional
            ``progress(done, total)``, called while passages are analysed (the
            slow part) and once with ``(total, total)`` when the index is built.

        Returns
        -------
        BM25Retriever
            ``self``.
        """
        doc_ids = list(doc_ids)
        texts = list(texts)
        if len(doc_ids) != len(texts):
            raise ValueError(f"{len(doc_ids)} doc ids but {len(texts)} texts")
        check_doc_ids(doc_ids)
        total = len(texts)
        step = _progress_step(total)
        tokenize = self.analyzer.tokenize
        vocab: dict[str, int] = {}
        corpus_ids: list[list[int]] = []
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"texts[{i}] must be a str, got {type(text).__name__}")
            terms = tokenize(text)
            # setdefault gives a new term the next id: ids are assigned in first-seen order.
            corpus_ids.append([vocab.setdefault(t, len(vocab)) for t in terms])
            if progress is not None and (i + 1) % step == 0 and i + 1 < total:
                progress(i + 1, total)
        self._build(doc_ids, corpus_ids, vocab)
        if progress is not None:
            progress(total, total)
        return self

    def index_tokens(
        self, doc_ids: Sequence[str], tokens: Sequence[Sequence[str]], progress: ProgressCallback | None = None
    ) -> BM25Retriever:
        """Index already analysed passages (``tokens[i]`` are the terms of ``doc_ids[i]``).

        The terms must come from :attr:`analyzer` (queries are analysed with
        it).  ``progress(total, total)`` is called once when done.  Returns ``self``.
        """
        doc_ids = list(doc_ids)
        if len(doc_ids) != len(tokens):
            raise ValueError(f"{len(doc_ids)} doc ids but {len(tokens)} token lists")
        check_doc_ids(doc_ids)
        vocab: dict[str, int] = {}
        corpus_ids = [[vocab.setdefault(t, len(vocab)) for t in terms] for terms in tokens]
        self._build(doc_ids, corpus_ids, vocab)
        if progress is not None:
            progress(len(doc_ids), len(doc_ids))
        return self

    def index_passages(
        self,
        passages: Iterable[Passage],
        *,
        with_title: bool = True,
        progress: ProgressCallback | None = None,
    ) -> BM25Retriever:
        """Index :class:`~core.types.Passage` objects by their ``id``.

        With ``with_title`` (default) a non-empty title is put before the text
        (``title + "\\n" + text``), as BEIR does for DBpedia.  Returns ``self``.
        """
        doc_ids: list[str] = []
        texts: list[str] = []
        for p in passages:
            doc_ids.append(p.id)
            texts.append(f"{p.title}\n{p.text}" if with_title and p.title else p.text)
        return self.index(doc_ids, texts, progress=progress)

    def _set_doc_ids(self, doc_ids: list[str]) -> None:
        n = len(doc_ids)
        order = sorted(range(n), key=doc_ids.__getitem__)
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n, dtype=np.int64)
        self._doc_ids = doc_ids
        self._rank = rank

    def _build(self, doc_ids: list[str], corpus_ids: list[list[int]], vocab: dict[str, int]) -> None:
        self._bm25s = self._rank_bm25 = self._corpus_ids = None
        if vocab:  # an index without a single term matches nothing: no backend needed
            if self.backend == "bm25s":
                self._bm25s = self._build_bm25s(corpus_ids, vocab)
            else:
                self._rank_bm25 = self._build_rank_bm25(corpus_ids, vocab)
                self._corpus_ids = corpus_ids
        self._vocab = vocab
        self._set_doc_ids(doc_ids)

    def _build_bm25s(self, corpus_ids: list[list[int]], vocab: dict[str, int]) -> Any:
        import bm25s
        from bm25s.tokenization import Tokenized

        model = bm25s.BM25(
            k1=self.k1,
            b=self.b,
            delta=self.delta,
            method=self.method,
            idf_method=self.idf_method,
            dtype=self.dtype,
            backend="numpy",
            csc_backend="numpy",
        )
        # Our own term ids and vocabulary: bm25s only builds the score matrix.
        # create_empty_token=False keeps bm25s from adding "" to our vocabulary.
        model.index(Tokenized(ids=corpus_ids, vocab=vocab), create_empty_token=False, show_progress=False)
        return model

    def _build_rank_bm25(self, corpus_ids: list[list[int]], vocab: dict[str, int]) -> Any:
        import rank_bm25

        # rank_bm25 works on any hashable terms: give it the term ids.
        if self.method == "okapi":
            return rank_bm25.BM25Okapi(corpus_ids, k1=self.k1, b=self.b, epsilon=self.epsilon)
        if self.method == "bm25l":
            return rank_bm25.BM25L(corpus_ids, k1=self.k1, b=self.b, delta=self.delta)
        return rank_bm25.BM25Plus(corpus_ids, k1=self.k1, b=self.b, delta=self.delta)

    # ------------------------------------------------------------------ scoring

    def _term_ids(self, terms: Sequence[str]) -> list[int]:
        vocab = self._vocab
        return [vocab[t] for t in terms if t in vocab]

    def _scores_and_baseline(self, ids: list[int]) -> tuple[np.ndarray, float]:
        """Scores of every document for the term ids ``ids`` (non-empty), and the no-match score."""
        if self._bm25s is not None:
            model = self._bm25s
            scores = model.get_scores_from_ids(ids)
            baseline = 0.0
            if model.nonoccurrence_array is not None:
                # bm25s adds this same float32 sum to every score (bm25l, bm25+)
                baseline = model.nonoccurrence_array[np.asarray(ids, dtype=model.int_dtype)].sum()
            return scores, baseline
        model = self._rank_bm25
        scores = model.get_scores(ids)
        baseline = 0.0
        if self.method == "bm25+":
            # BM25Plus gives idf * delta to a document without the term; summed the same way
            # as get_scores does so that a non-matching document equals it exactly.
            for t in ids:
                baseline += (model.idf.get(t) or 0) * (model.delta + 0.0)
        return scores, baseline

    def get_scores(self, query: str) -> np.ndarray:
        """The BM25 score of every indexed document for ``query``, aligned with :attr:`doc_ids`.

        Documents without any query term get the baseline (0, or the
        ``bm25l``/``bm25+`` constant).
        """
        self._require_index()
        return self.get_scores_tokens(self.analyzer.tokenize(query))

    def get_scores_tokens(self, terms: Sequence[str]) -> np.ndarray:
        """:meth:`get_scores` for an analysed query."""
        self._require_index()
        ids = self._term_ids(terms)
        if not ids:
            dtype = self.dtype if self.backend == "bm25s" else "float64"
            return np.zeros(len(self), dtype=dtype)
        return self._scores_and_baseline(ids)[0]

    def _top(self, ids: list[int], k: int) -> tuple[list[int], list[float]]:
        """Rows and scores of the top ``k`` matching documents, in trec order."""
        if not ids:
            return [], []
        scores, baseline = self._scores_and_baseline(ids)
        candidates = np.flatnonzero(scores > baseline)
        key = trec_scores(scores[candidates])  # float64 scores too are ranked as trec_eval's float32
        if candidates.size > k:
            kth = key[np.argpartition(key, key.size - k)[key.size - k]]  # the k-th largest score
            keep = key >= kth  # every document tied with it stays a candidate
            candidates, key = candidates[keep], key[keep]
        assert self._rank is not None
        order = trec_argsort(key, self._rank[candidates])[:k]
        return candidates[order].tolist(), scores[candidates[order]].tolist()

    # ------------------------------------------------------------------ searching

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """The top ``k`` matching passages for ``query``, in trec order (fewer if fewer match)."""
        if not isinstance(query, str):
            raise TypeError(f"query must be str, got {type(query).__name__}")
        return self.search_tokens(self.analyzer.tokenize(query), k)

    def search_tokens(self, terms: Sequence[str], k: int = 10) -> list[Hit]:
        """:meth:`search` for an analysed query (terms from :attr:`analyzer`)."""
        ids = self._indexed_ids()
        positive_int(k, "k")
        rows, scores = self._top(self._term_ids(terms), int(k))
        return [Hit(ids[r], s) for r, s in zip(rows, scores)]

    def batch_search(self, queries: Mapping[str, str], k: int = 10, *, progress: ProgressCallback | None = None) -> Run:
        """``{qid: text}`` -> ``{qid: {doc_id: score}}``; each query's hits in trec order.

        Every query gets an entry, empty when nothing matches.
        ``progress(done, total)`` follows the queries.
        """
        self._require_index()
        tokenize = self.analyzer.tokenize
        analysed: dict[str, list[str]] = {}
        for qid, text in queries.items():
            if not isinstance(qid, str) or not isinstance(text, str):
                raise TypeError(f"queries must map str ids to str texts, got {qid!r}: {type(text).__name__}")
            analysed[qid] = tokenize(text)
        return self.batch_search_tokens(analysed, k, progress=progress)

    def batch_search_tokens(
        self, queries: Mapping[str, Sequence[str]], k: int = 10, *, progress: ProgressCallback | None = None
    ) -> Run:
        """:meth:`batch_search` for analysed queries ``{qid: terms}``."""
        ids = self._indexed_ids()
        positive_int(k, "k")
        k = int(k)
        total = len(queries)
        step = _progress_step(total)
        run: Run = {}
        for done, (qid, terms) in enumerate(queries.items(), start=1):
            rows, scores = self._top(self._term_ids(terms), k)
            run[qid] = {ids[r]: s for r, s in zip(rows, scores)}
            if progress is not None and (done % step == 0 or done == total):
                progress(done, total)
        return run

    # ------------------------------------------------------------------ persistence

    def save(self, folder: str | os.PathLike[str]) -> Path:
        """Write the index into ``folder`` (created if needed); see the module docstring.  Returns the folder."""
        self._require_index()
        root = Path(folder)
        root.mkdir(parents=True, exist_ok=True)
        if self._bm25s is not None:
            self._bm25s.save(root / "bm25s", show_progress=False)
        if self._corpus_ids is not None:
            lengths = np.fromiter((len(d) for d in self._corpus_ids), dtype=np.int64, count=len(self._corpus_ids))
            offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
            np.cumsum(lengths, out=offsets[1:])
            flat = np.fromiter((t for d in self._corpus_ids for t in d), dtype=np.int64, count=int(offsets[-1]))
            np.save(root / "corpus_terms.npy", flat)
            np.save(root / "corpus_offsets.npy", offsets)
            write_json(root / "vocab.json", self._vocab)
        meta = {
            "format": _FORMAT,
            "version": _FORMAT_VERSION,
            "name": self.name,
            "params": self.params | {"delta": self.delta, "epsilon": self.epsilon},
            "analyzer": self.analyzer.params,
            "count": len(self),
            "vocabulary_size": len(self._vocab),
            "doc_ids": self._doc_ids,
        }
        write_json(root / "meta.json", meta)  # written last: its presence marks a complete index
        return root

    @classmethod
    def load(
        cls, folder: str | os.PathLike[str], *, analyzer: Analyzer | None = None, name: str | None = None
    ) -> BM25Retriever:
        """Read what :meth:`save` wrote.

        ``analyzer`` defaults to the one rebuilt from the saved parameters; a
        ``UserWarning`` says when the running jieba/PyStemmer/Unicode versions
        differ from those the index was built with (queries could then be
        analysed differently from the passages).  A different ``analyzer``
        configuration than the saved one is a ``ValueError``.
        """
        root = Path(folder)
        meta, _ = read_saved_index(root, "BM25", _FORMAT, _FORMAT_VERSION)
        p = meta["params"]
        retriever = cls(
            _saved_analyzer(root, meta["analyzer"], analyzer),
            k1=p["k1"],
            b=p["b"],
            method=p["method"],
            idf_method=p.get("idf_method"),
            delta=p["delta"],
            epsilon=p["epsilon"],
            backend=p["backend"],
            dtype=p.get("dtype", "float32"),
            name=name if name is not None else meta.get("name", "bm25"),
        )
        doc_ids = meta["doc_ids"]
        if not isinstance(doc_ids, list) or len(doc_ids) != meta.get("count"):
            raise ValueError(f"{root / 'meta.json'}: doc_ids and count disagree")
        check_doc_ids(doc_ids)
        vocabulary_size = meta.get("vocabulary_size", 0)
        if retriever.backend == "bm25s":
            retriever._bm25s, retriever._vocab = _load_bm25s(root, len(doc_ids), vocabulary_size)
            retriever._set_doc_ids(doc_ids)
        else:
            retriever._build(doc_ids, *_load_corpus_terms(root, len(doc_ids), vocabulary_size))
        return retriever


def _saved_analyzer(root: Path, saved_params: dict[str, Any], analyzer: Analyzer | None) -> Analyzer:
    """The analyzer to load an index with: ``analyzer`` if it is the saved one's configuration, else that one.

    Warns when the running tokenizer/stemmer versions differ from the saved ones.
    """
    saved = Analyzer.from_params(saved_params)
    if analyzer is None:
        analyzer = saved
    elif analyzer != saved:
        raise ValueError(f"{root}: the index was built with {saved}, not {analyzer}")
    if analyzer.params != saved_params:
        warnings.warn(
            f"{root}: index built with analyzer {saved_params}, running {analyzer.params}",
            UserWarning,
            stacklevel=3,
        )
    return analyzer


def _load_bm25s(root: Path, n_docs: int, vocabulary_size: int) -> tuple[Any, dict[str, int]]:
    """The saved bm25s model (``None`` for an empty vocabulary) and its vocabulary, checked against meta.json."""
    model = None
    vocab: dict[str, int] = {}
    if vocabulary_size:
        import bm25s

        model = bm25s.BM25.load(root / "bm25s", load_corpus=False, mmap=False, show_progress=False)
        if model.scores["num_docs"] != n_docs:
            raise ValueError(f"{root}: the bm25s index has {model.scores['num_docs']} documents, meta.json {n_docs}")
        vocab = model.vocab_dict
    if len(vocab) != vocabulary_size:
        raise ValueError(f"{root}: the vocabulary has {len(vocab)} terms, meta.json {vocabulary_size}")
    return model, vocab


def _load_corpus_terms(root: Path, n_docs: int, vocabulary_size: int) -> tuple[list[list[int]], dict[str, int]]:
    """The saved term ids of every passage (rank_bm25 backend) and the vocabulary, checked against meta.json."""
    if not vocabulary_size:
        return [[] for _ in range(n_docs)], {}
    flat = np.load(root / "corpus_terms.npy")
    offsets = np.load(root / "corpus_offsets.npy")
    vocab: dict[str, int] = json.loads((root / "vocab.json").read_text(encoding="utf-8"))
    if len(offsets) != n_docs + 1 or len(vocab) != vocabulary_size:
        raise ValueError(f"{root}: corpus_offsets.npy, vocab.json and meta.json disagree")
    bounds = offsets.tolist()
    terms = flat.tolist()
    return [terms[bounds[i] : bounds[i + 1]] for i in range(n_docs)], vocab
