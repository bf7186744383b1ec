"""A collection's passages and queries in memory, ready to index and search."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.types import Passage
from db.engine import Store


@dataclass
class Corpus:
    """A collection's passages and queries, ready to index and search.

    ``doc_ids`` are the *passage* ids (what a run ranks) and ``texts`` their
    texts with ``context`` applied (:func:`core.context.contextualise`).
    ``passages`` keeps the passages themselves (document id, position, title,
    raw text), which hierarchical retrieval and other contexts
    (:meth:`texts_for`) need.
    """

    collection: str
    language: str | None
    doc_ids: list[str]
    texts: list[str]
    queries: dict[str, str]
    answers: dict[str, list[Any]]
    passages: list[Passage] = field(default_factory=list)
    context: str = "title"
    _contextualised: dict[str, list[str]] = field(default_factory=dict, repr=False, compare=False)

    def texts_for(self, context: str | None) -> list[str]:
        """The passage texts with ``context`` (``None``: :attr:`texts`), computed once per context."""
        if context is None or context == self.context:
            return self.texts
        if context not in self._contextualised:
            from core.context import check_context_mode, contextualise

            check_context_mode(context)
            if len(self.passages) != len(self.doc_ids):
                raise ValueError(f"this corpus keeps no passages, so it cannot give them the {context!r} context")
            self._contextualised[context] = contextualise(self.passages, context)
        return self._contextualised[context]


def load_corpus(
    store: Store,
    collection: str,
    *,
    with_title: bool = True,
    split: str | None = None,
    context: str | None = None,
) -> Corpus:
    """Passages, their texts with document ``context`` and the query texts of a collection.

    ``context`` (:data:`core.context.CONTEXT_MODES`) defaults to ``"title"`` (the title
    prepended when it is not already the text's start), or ``"none"`` with
    ``with_title=False``.  Retrievers built with another ``context`` option get their
    texts from :meth:`Corpus.texts_for` in :func:`pooljudge.retrievers.index_retriever`.
    """
    from core.context import check_context_mode, contextualise
    from core.context import with_title as titled
    from db.queries import iter_passages, iter_queries, list_collections

    context = check_context_mode(context if context is not None else ("title" if with_title else "none"))
    with store.read() as session:
        info = next((c for c in list_collections(session) if c.name == collection), None)
        if info is None:
            from db.queries import NotFound, collection_id

            collection_id(session, collection)  # raises NotFound naming the collections
            # it exists but list_collections leaves it out: archived
            raise NotFound(f"collection {collection!r} is archived (restore it first)")
        doc_ids, texts, passages = [], [], []
        for p in iter_passages(session, collection):
            doc_ids.append(p.id)
            passages.append(p)
            texts.append(titled(p.text, p.title) if context == "title" else p.text)
        queries, answers = {}, {}
        for q in iter_queries(session, collection):
            if split is None or q.split == split:
                queries[q.id] = q.text
                if q.answers:
                    answers[q.id] = q.answers
    if context.endswith("keyphrases"):
        texts = contextualise(passages, context)
    return Corpus(collection, info.language, doc_ids, texts, queries, answers, passages=passages, context=context)
