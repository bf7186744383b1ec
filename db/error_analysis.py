"""Error analysis in the store: sample failing queries of a run, suggest and confirm error tags.

This follows DuReader-retrieval's error-sampling workflow (Qiu et al., EMNLP
2022, Section 5 / Table 10): pick a run and a cut-off ``k``, sample ``N``
judged queries whose top ``k`` holds no relevant passage (they analysed 100
queries x top 5), and tag each (query, passage) pair with an error category.
Detectors in :mod:`core.detectors` *suggest* tags (``status="suggested"``,
``source="auto"``); an analyst confirms or rejects them, or adds tags of their
own (``status="confirmed"``, ``source="analyst"``).  Confirmed tags feed
:func:`core.analysis.metrics_by_category` through :func:`query_categories`.

Every function takes a :class:`~sqlalchemy.orm.Session` first; callers own
the transaction.  Results are plain data (lists, dicts, sets), never ORM
objects.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.analysis import failing_queries  # pure: moved to core (re-exported here for callers)
from core.detectors import Suggestion, category_ids, suggest, typo_term_frequencies
from core.fusion import trec_ranking
from core.types import Qrels, Run
from db.lexicon import collection_lexicon
from db.models import ErrorTag, PassageRecord, QueryRecord, RunRecord
from db.queries import (
    NotFound,
    collection_id,
    iter_passages,
    iter_queries,
    relevance_level,
    stored_run,
)
from db.suggestion_store import auto_tag_keys, suggested_tag, tag_run_id

TAG_STATUSES = ("suggested", "confirmed", "rejected")
TAG_SOURCES = ("auto", "analyst")
_IN_CHUNK = 500  # ids per IN (...) clause, well under SQLite's variable limit


# --------------------------------------------------------------------------- sampling


def _chunks(items: Sequence[str], size: int = _IN_CHUNK) -> Iterable[Sequence[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _passages(session: Session, cid: int, doc_ids: Sequence[str]) -> dict[str, tuple[str, str, str | None, int | None]]:
    """``{passage id: (text, title, document id, position)}`` of the passages the store has."""
    passages: dict[str, tuple[str, str, str | None, int | None]] = {}
    for chunk in _chunks(doc_ids):
        for ext, text, title, doc, pos in session.execute(
            select(
                PassageRecord.ext_id,
                PassageRecord.text,
                PassageRecord.title,
                PassageRecord.doc_id,
                PassageRecord.position,
            ).where(PassageRecord.collection_id == cid, PassageRecord.ext_id.in_(chunk))
        ):
            passages[ext] = (text, title, doc, pos)
    return passages


def _query_texts(session: Session, cid: int, qids: Sequence[str]) -> tuple[dict[str, str], dict[str, Any]]:
    """``({qid: text}, {qid: reference answers})`` of the queries the store has."""
    texts: dict[str, str] = {}
    answers: dict[str, Any] = {}
    for chunk in _chunks(qids):
        for ext, text, known in session.execute(
            select(QueryRecord.ext_id, QueryRecord.text, QueryRecord.answers).where(
                QueryRecord.collection_id == cid, QueryRecord.ext_id.in_(chunk)
            )
        ):
            texts[ext], answers[ext] = text, known
    return texts, answers


def _error_pairs(
    session: Session, cid: int, run: Run, qrels: Qrels, tops: dict[str, list[str]]
) -> list[dict[str, Any]]:
    """The pairs of :func:`sample_error_pairs`: each sampled query's top passages with the store's texts."""
    chosen = list(tops)
    passages = _passages(session, cid, sorted({d for top in tops.values() for d in top}))
    texts, answers = _query_texts(session, cid, chosen)
    pairs = []
    for qid in chosen:
        judged = qrels.get(qid, {})
        for rank, doc in enumerate(tops[qid], 1):
            text, title, document, position = passages.get(doc) or (None, None, None, None)
            pairs.append(
                {
                    "query_id": qid,
                    "query": texts.get(qid),
                    "answers": answers.get(qid),
                    "doc_id": doc,
                    "rank": rank,
                    "score": float(run[qid][doc]),
                    "label": judged.get(doc),
                    "text": text,
                    "title": title,
                    "document": document,
                    "position": position,
                }
            )
    return pairs


def sample_error_pairs(
    session: Session,
    collection: str,
    run_name: str,
    *,
    qrels: Qrels,
    k: int = 5,
    n: int = 100,
    level: int | None = None,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """A seeded sample of up to ``n`` failing queries of a stored run, with their top-``k`` pairs.

    Parameters
    ----------
    session : Session
    collection, run_name : str
        The collection and one of its stored runs.
    qrels : Qrels
        The labels to judge the run against (e.g. :func:`db.queries.stored_qrels`
        or :func:`db.resolution.live_qrels`).
    k : int, optional
        See :func:`failing_queries`.
    level : int, optional
        See :func:`failing_queries`; default the collection's relevance level
        (:func:`db.queries.relevance_level`), as on the pages and in
        ``pooljudge eval -c``.
    n : int, optional
        Number of queries to sample (default 100); all failing queries when
        fewer fail.
    seed : int, optional
        ``random.Random(seed).sample`` over the sorted failing query ids.

    Returns
    -------
    list of dict
        One dict per pair, queries in sorted qid order and pairs in rank
        order: ``query_id``, ``query`` (text, ``None`` when the store lacks
        the query), ``answers`` (the query's reference answers or ``None``),
        ``doc_id`` (the passage id), ``rank`` (1-based),
        ``score``, ``label`` (``None`` if unjudged), ``text``, ``title``,
        ``document`` (the passage's document id) and ``position``; the last
        four are ``None`` for a passage the store lacks.
    """
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative int, got {n!r}")
    cid = collection_id(session, collection)
    if level is None:
        level = relevance_level(session, collection)
    run = stored_run(session, collection, run_name)
    failing = failing_queries(qrels, run, k=k, level=level)
    chosen = sorted(random.Random(seed).sample(failing, min(n, len(failing))))
    return _error_pairs(session, cid, run, qrels, {qid: trec_ranking(run.get(qid, {}))[:k] for qid in chosen})


# --------------------------------------------------------------------------- suggestions


def collection_term_frequencies(session: Session, collection: str) -> dict[str, int]:
    """Counts of lowercased Latin words over a collection's queries and passages (titles included).

    The table :func:`core.detectors.detect_typos` wants, counted by
    :func:`core.detectors.typo_term_frequencies`.  One streaming pass;
    Chinese words are not counted (so typo suggestions are for Latin-script
    words only).
    """
    queries = (q.text for q in iter_queries(session, collection))
    passages = (text for p in iter_passages(session, collection) for text in (p.title, p.text))
    return typo_term_frequencies(chain(queries, passages))


def _earlier_chunks(session: Session, cid: int, pairs: Sequence[Mapping[str, Any]]) -> dict[str, list[tuple[int, str]]]:
    """``{document: [(position, text), ...]}`` for the documents of ``pairs``, in position order."""
    documents = sorted(
        {p["document"] for p in pairs if p.get("document") is not None and p.get("position") is not None}
    )
    out: dict[str, list[tuple[int, str]]] = {}
    for chunk in _chunks(documents):
        for doc, pos, text in session.execute(
            select(PassageRecord.doc_id, PassageRecord.position, PassageRecord.text)
            .where(
                PassageRecord.collection_id == cid, PassageRecord.doc_id.in_(chunk), PassageRecord.position.is_not(None)
            )
            .order_by(PassageRecord.doc_id, PassageRecord.position, PassageRecord.id)
        ):
            if doc is not None and pos is not None:  # the query asks for both; this narrows the types
                out.setdefault(doc, []).append((pos, text))
    return out


def earlier_chunks(session: Session, collection: str, document: str, position: int) -> list[tuple[int, str]]:
    """``[(position, text), ...]`` of the passages of ``document`` before ``position``: the context :func:`suggest_tags` uses."""
    chunks = _earlier_chunks(
        session, collection_id(session, collection), [{"document": document, "position": position}]
    )
    return [(pos, text) for pos, text in chunks.get(document, []) if pos < position]


def _suggest(
    pair: Mapping[str, Any],
    documents: Mapping[str, list[tuple[int, str]]],
    *,
    language: str | None,
    term_frequencies: Mapping[str, int] | None,
    lexicon: Mapping[str, str] | None = None,
    encoder: Any = None,
) -> list[Suggestion]:
    """:func:`core.detectors.suggest` on one sampled pair, with its document's earlier chunks as context."""
    position, document = pair.get("position"), pair.get("document")
    chunks = documents.get(document, []) if document is not None else []
    earlier = [text for pos, text in chunks if position is not None and pos < position]
    return suggest(
        pair["query"],
        pair["text"],
        label=pair.get("label"),
        score=pair.get("score"),
        rank=pair.get("rank"),
        title=pair.get("title") or "",
        earlier_chunks=earlier,
        language=language,
        term_frequencies=term_frequencies,
        answers=pair.get("answers"),
        lexicon=lexicon,
        encoder=encoder,
    )


def suggest_tags(
    session: Session,
    collection: str,
    run_name: str | None,
    pairs: Iterable[Mapping[str, Any]],
    *,
    language: str | None = None,
    term_frequencies: Mapping[str, int] | None = None,
    lexicon: Mapping[str, str] | None = None,
    encoder: Any = None,
) -> int:
    """Run :func:`core.detectors.suggest` on each pair and store the suggestions as tags.

    Parameters
    ----------
    session : Session
        Inside the caller's write transaction.
    collection, run_name : str, str or None
        The collection; the run the pairs come from (recorded on each tag).
    pairs : iterable of dict
        As returned by :func:`sample_error_pairs`; pairs whose passage text
        or query text is ``None`` (not in the store) are skipped.
    language : {"en", "zh", "mixed"} or None, optional
        Passed to :func:`~core.detectors.suggest` (detected per pair when ``None``).
    term_frequencies : mapping, optional
        Collection word counts enabling the typo detector (``None``: no typos;
        :func:`collection_term_frequencies` builds one in a single pass).
    lexicon, encoder : optional
        A collection's own names ``{name: kind}`` (``None``: its stored lexicon,
        :mod:`db.lexicon`); its encoder (the alignment detector).

    Returns
    -------
    int
        The number of tags stored.  Document context comes from the store:
        the passage's title and, as earlier chunks, the texts of the passages
        of the same document with a smaller position, in position order.
        A suggestion is not stored when an automatic tag with the same
        (query, doc, category) already exists in the collection, whatever
        its status (so a rejected suggestion does not come back), nor twice
        within one call.
    """
    cid = collection_id(session, collection)
    rid = tag_run_id(session, cid, run_name)
    pairs = [p for p in pairs if p.get("text") is not None and p.get("query") is not None]
    documents = _earlier_chunks(session, cid, pairs)
    existing = auto_tag_keys(session, cid)
    stored = 0
    lexicon = collection_lexicon(session, collection) if lexicon is None else lexicon
    options = {"language": language, "term_frequencies": term_frequencies, "lexicon": lexicon, "encoder": encoder}
    for pair in pairs:
        for s in _suggest(pair, documents, **options):
            key = (pair["query_id"], pair["doc_id"], s.category)
            if key in existing:
                continue
            existing.add(key)
            session.add(suggested_tag(cid, rid, key[0], key[1], s))
            stored += 1
    session.flush()
    return stored


# --------------------------------------------------------------------------- analyst tags


def _check_tag(qid: object, doc_id: object, category: object, extra_categories: Iterable[str]) -> None:
    """Refuse (``ValueError``) an empty id or a category neither in the taxonomy nor among ``extra_categories``."""
    for name, value in (("qid", qid), ("doc_id", doc_id), ("category", category)):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{name} must be a non-empty str, got {value!r}")
    allowed = [*category_ids(), *extra_categories]
    if category not in allowed:
        raise ValueError(f"unknown error category {category!r} (known: {', '.join(allowed)})")


def tag_pair(
    session: Session,
    collection: str,
    qid: str,
    doc_id: str,
    category: str,
    *,
    user_id: int | None = None,
    run_name: str | None = None,
    note: str = "",
    extra_categories: Iterable[str] = (),
    category_name: str | None = None,
) -> int:
    """An analyst's tag on a (query, doc) pair (``status="confirmed"``, ``source="analyst"``).

    Parameters
    ----------
    category : str
        A taxonomy id (:func:`core.detectors.category_ids`) or one of
        ``extra_categories`` (a project's own categories).
    note : str, optional
        Stored as ``evidence["note"]``.
    category_name : str, optional
        The display name of a project's own category, stored as
        ``evidence["category_name"]`` so that the tag names it even without a
        row in ``error_categories`` (:mod:`db.error_categories`; categories
        used before migration 0009 have none).

    Returns
    -------
    int
        The new tag's id.

    Raises
    ------
    ValueError
        An empty id or an unknown category.
    NotFound
        An unknown collection or run.
    """
    _check_tag(qid, doc_id, category, extra_categories)
    cid = collection_id(session, collection)
    tag = ErrorTag(
        collection_id=cid,
        query_id=qid,
        doc_id=doc_id,
        run_id=tag_run_id(session, cid, run_name),
        category=category,
        status="confirmed",
        source="analyst",
        user_id=user_id,
        evidence={"note": note} | ({"category_name": category_name} if category_name else {}),
    )
    session.add(tag)
    session.flush()
    return tag.id


def set_tag_status(session: Session, tag_id: int, status: str, *, user_id: int | None = None) -> None:
    """Confirm, reject (or reset to suggested) a tag; ``user_id``, when given, records who decided."""
    if status not in TAG_STATUSES:
        raise ValueError(f"status must be one of {TAG_STATUSES}, got {status!r}")
    tag = session.get(ErrorTag, tag_id)
    if tag is None:
        raise NotFound(f"no error tag with id {tag_id}")
    tag.status = status
    if user_id is not None:
        tag.user_id = user_id
    session.flush()


def list_tags(
    session: Session,
    collection: str,
    *,
    status: str | None = None,
    category: str | None = None,
    query_id: str | None = None,
) -> list[dict[str, Any]]:
    """A collection's tags, oldest first, optionally filtered by status, category or query.

    Each dict has ``id``, ``query_id``, ``doc_id``, ``run`` (name or ``None``),
    ``category``, ``status``, ``source``, ``evidence``, ``user_id`` and
    ``created_at``.
    """
    if status is not None and status not in TAG_STATUSES:
        raise ValueError(f"status must be one of {TAG_STATUSES}, got {status!r}")
    cid = collection_id(session, collection)
    query = (
        select(ErrorTag, RunRecord.name)
        .outerjoin(RunRecord, RunRecord.id == ErrorTag.run_id)
        .where(ErrorTag.collection_id == cid)
        .order_by(ErrorTag.id)
    )
    if status is not None:
        query = query.where(ErrorTag.status == status)
    if category is not None:
        query = query.where(ErrorTag.category == category)
    if query_id is not None:
        query = query.where(ErrorTag.query_id == query_id)
    return [
        {
            "id": t.id,
            "query_id": t.query_id,
            "doc_id": t.doc_id,
            "run": run,
            "category": t.category,
            "status": t.status,
            "source": t.source,
            "evidence": t.evidence,
            "user_id": t.user_id,
            "created_at": t.created_at,
        }
        for t, run in session.execute(query).all()
    ]


def category_distribution(
    session: Session, collection: str, *, statuses: Sequence[str] = ("confirmed",)
) -> dict[str, int]:
    """Number of distinct (query, doc) pairs per category among tags of the given statuses.

    Counting distinct pairs means an analyst tag and a confirmed suggestion
    of the same category on the same pair count once.  Categories are sorted
    by count descending, then id.
    """
    bad = [s for s in statuses if s not in TAG_STATUSES]
    if bad or isinstance(statuses, str):
        raise ValueError(f"statuses must be a sequence of {TAG_STATUSES}, got {statuses!r}")
    cid = collection_id(session, collection)
    pairs = set(
        session.execute(
            select(ErrorTag.category, ErrorTag.query_id, ErrorTag.doc_id).where(
                ErrorTag.collection_id == cid, ErrorTag.status.in_(list(statuses))
            )
        ).all()
    )
    counts = Counter(category for category, _, _ in pairs)
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def query_categories(session: Session, collection: str) -> dict[str, set[str]]:
    """``{qid: {category, ...}}`` of confirmed tags, for :func:`core.analysis.metrics_by_category`."""
    cid = collection_id(session, collection)
    out: dict[str, set[str]] = {}
    for qid, category in session.execute(
        select(ErrorTag.query_id, ErrorTag.category).where(
            ErrorTag.collection_id == cid, ErrorTag.status == "confirmed"
        )
    ):
        out.setdefault(qid, set()).add(category)
    return out
