"""The `leakage` command: training queries near-duplicating dev/test ones."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pooljudge.cli.common import StageBars, open_store, output


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `leakage` command: training queries near-duplicating dev/test ones."""
    p = sub.add_parser(
        "leakage",
        help="training queries that near-duplicate a dev/test query (query embedding cosine; "
        "character bigrams for Chinese without a Chinese encoder)",
    )
    p.add_argument("--collection", "-c", required=True)
    p.add_argument(
        "--threshold",
        type=float,
        default=0.5,
        help="cosine at or above which a pair leaks (default 0.5, as DuReader-retrieval)",
    )
    p.add_argument("--model", help="local encoder folder (default: the bundled all-MiniLM-L6-v2, English only)")
    p.add_argument(
        "--chinese",
        choices=("auto", "char-bigram", "encoder"),
        default="auto",
        help="how Chinese queries are compared: char-bigram (lexical, Chinese against Chinese only), "
        "encoder (the model's cosine); auto (default): encoder when --model is given, else char-bigram",
    )
    p.add_argument(
        "--lexical-threshold",
        type=float,
        help="character-bigram cosine at or above which a Chinese pair "
        "leaks (default 0.4, calibrated on the demo: see core.analysis.LEXICAL_LEAKAGE_THRESHOLD)",
    )
    p.add_argument("--train-split", default="train")
    p.add_argument("--eval-split", action="append", help="split to protect; repeatable (default: dev and test)")
    p.add_argument("--ids-only", action="store_true", help="write only the ids of the training queries to remove")
    p.add_argument("--output", "-o", help="output file ('-' or omitted: stdout)")
    p.set_defaults(func=run)


def _leakage_lexical_threshold(args: argparse.Namespace) -> float:
    """Check the thresholds before minutes of encoding, not after; the lexical one with its default."""
    from core.analysis import LEXICAL_LEAKAGE_THRESHOLD

    if not -1.0 <= args.threshold <= 1.0:
        raise ValueError(f"threshold must be a number in [-1, 1], got {args.threshold}")
    lexical_threshold = LEXICAL_LEAKAGE_THRESHOLD if args.lexical_threshold is None else args.lexical_threshold
    if not 0.0 < lexical_threshold <= 1.0:
        raise ValueError(f"--lexical-threshold must be a number in (0, 1], got {lexical_threshold}")
    return float(lexical_threshold)


def _leakage_vectors(args: argparse.Namespace, queries: list, eval_splits: Sequence[str], chinese: str):
    """One embedding row per query; zeros for the queries the encoder does not compare (None if it compares none).

    Only the queries the encoder compares are encoded: no model is loaded for an all-Chinese collection.
    """
    import numpy as np

    from core.leakage import is_chinese
    from pooljudge.encoders import encoder_for, query_vectors

    encoded = [
        i
        for i, q in enumerate(queries)
        if (q.split == args.train_split or q.split in eval_splits) and not (chinese == "char-bigram" and is_chinese(q))
    ]
    if not encoded:
        return None
    bars = StageBars(args.quiet)
    found = query_vectors(
        [queries[i] for i in encoded],
        encoder_for({"model": args.model} if args.model else {}),
        progress=bars("encoding queries"),
    )
    bars.close()
    vectors = np.zeros((len(queries), found.shape[1]), dtype=found.dtype)
    vectors[encoded] = found
    return vectors


def _write_leaks(args: argparse.Namespace, leaks: list[dict]) -> list[str]:
    """Write the matches (or only the flagged training ids) to ``--output``; return the flagged ids."""
    flagged = sorted({row["train_id"] for row in leaks})
    with output(args.output) as out:
        if args.ids_only:
            out.writelines(f"{qid}\n" for qid in flagged)
            return flagged
        out.write("train_id\teval_id\teval_split\tsimilarity\ttrain_query\teval_query\tmethod\n")
        for row in leaks:
            texts = [" ".join(row[k].split()) for k in ("train_query", "eval_query")]  # one line per match
            out.write(
                f"{row['train_id']}\t{row['eval_id']}\t{row['eval_split']}\t{row['similarity']:.4f}\t"
                f"{texts[0]}\t{texts[1]}\t{row['method']}\n"
            )
    return flagged


def run(args: argparse.Namespace) -> int:
    from core.leakage import chinese_leakage_method, leakage_method_text, leaked_training_queries
    from db.queries import iter_queries

    lexical_threshold = _leakage_lexical_threshold(args)
    chinese = chinese_leakage_method(bool(args.model)) if args.chinese == "auto" else args.chinese
    store = open_store(args)
    with store.read() as session:
        queries = list(iter_queries(session, args.collection))
    eval_splits = args.eval_split or ("dev", "test")
    leaks = leaked_training_queries(
        queries,
        _leakage_vectors(args, queries, eval_splits, chinese),
        threshold=args.threshold,
        train_split=args.train_split,
        eval_splits=eval_splits,
        chinese=chinese,
        lexical_threshold=lexical_threshold,
    )
    flagged = _write_leaks(args, leaks)
    n_train = sum(q.split == args.train_split for q in queries)
    model_name = Path(args.model).name if args.model else "all-MiniLM-L6-v2"
    print(
        f"{len(flagged)} of {n_train} {args.train_split} queries have a dev/test query at or above the threshold "
        f"({len(leaks)} matches); "
        + leakage_method_text(
            queries,
            chinese=chinese,
            threshold=args.threshold,
            lexical_threshold=lexical_threshold,
            model_name=model_name,
            train_split=args.train_split,
        ),
        file=sys.stderr,
    )
    return 0
