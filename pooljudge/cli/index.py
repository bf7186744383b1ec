"""The `index` command: build a retriever's index."""

from __future__ import annotations

import argparse

from pooljudge.cli.common import RETRIEVER_HELP, StageBars, open_store


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `index` command: build a retriever's index."""
    p = sub.add_parser("index", help="build (and cache) a retriever's index over a collection")
    p.add_argument("--collection", "-c", required=True)
    p.add_argument("--retriever", "-r", default="bm25", help=RETRIEVER_HELP)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pooljudge.corpus import load_corpus
    from pooljudge.encoders import models_text
    from pooljudge.models_lookup import reranker_folder
    from pooljudge.retrievers import RetrieverSpec, build_retriever, index_retriever

    store = open_store(args)
    spec = RetrieverSpec.parse(args.retriever)
    corpus = load_corpus(store, args.collection)
    bars = StageBars(args.quiet)
    retriever = build_retriever(
        spec, corpus.language, resolve=lambda model: reranker_folder(store, args.collection, model)
    )
    index_retriever(retriever, corpus, progress=bars(f"indexing {retriever.name}"))
    bars.close()
    models = models_text(retriever.describe())
    print(
        f"indexed {len(corpus.doc_ids)} passages of {args.collection!r} with {spec.text}"
        + (f" ({models})" if models else "")
        + " (cached for reuse)"
    )
    return 0
