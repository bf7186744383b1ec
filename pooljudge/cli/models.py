"""The `models` command: list trained models."""

from __future__ import annotations

import argparse

from pooljudge.cli.common import open_store


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `models` command: list trained models."""
    p = sub.add_parser("models", help="list trained models (name, kind, collection, best held-out nDCG@10, path)")
    p.add_argument("--collection", "-c", help="only this collection's")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.names import display_name
    from db.trained_models import list_models

    with open_store(args).read() as session:
        models = list_models(session, args.collection)
    if not models:
        print("no trained models (train one with `pooljudge train`)")
    for m in models:  # names are checked when stored, but print them escaped as every listing does
        ndcg = m.best_eval.get("nDCG@10")
        print(
            f"{display_name(m.name)}\t{m.kind}\t{display_name(m.collection)}\t"
            f"nDCG@10 {'-' if ndcg is None else f'{ndcg:.4f}'}\t{display_name(m.path)}"
        )
    return 0
