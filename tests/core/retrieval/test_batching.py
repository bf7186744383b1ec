"""core.retrieval.batching: packed tokens, token-budget batches, the prefetching thread."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from core.retrieval.batching import PackedTokens, prefetch, token_budget_batches


def test_pad_gathers_each_row_and_masks_the_rest():
    packed = PackedTokens.from_lists([[5, 6, 7, 8], [9], [10, 11]], [[0, 0, 1, 1], [0], [1, 1]], pad_id=3)
    inputs = packed.pad(np.array([2, 0, 1]))
    assert inputs["input_ids"].tolist() == [[10, 11, 3, 3], [5, 6, 7, 8], [9, 3, 3, 3]]
    assert inputs["attention_mask"].tolist() == [[1, 1, 0, 0], [1, 1, 1, 1], [1, 0, 0, 0]]
    assert inputs["token_type_ids"].tolist() == [[1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 0, 0]]
    assert inputs["input_ids"].dtype == np.int64 and inputs["attention_mask"].dtype == np.int64
    assert packed.pad(np.array([1]))["input_ids"].tolist() == [[9]]  # padded to its own longest only
    assert len(packed) == 3 and packed.lengths.tolist() == [4, 1, 2]


def test_token_budget_batches_keep_order_and_budget_greedily():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 60, size=500)
    order = np.argsort(-lengths, kind="stable")
    batches = token_budget_batches(lengths, order, max_tokens=300, max_rows=16)
    assert np.concatenate(batches).tolist() == order.tolist()
    for i, rows in enumerate(batches):
        width = int(lengths[rows].max())
        assert len(rows) <= 16
        assert len(rows) * width <= 300 or len(rows) == 1
        if i + 1 < len(batches) and len(rows) < 16:  # it stopped because the next text would pass the budget
            assert (len(rows) + 1) * max(width, int(lengths[batches[i + 1][0]])) > 300
    # a text longer than the budget goes alone
    assert [b.tolist() for b in token_budget_batches(np.array([50, 2]), np.array([0, 1]), 10, 8)] == [[0], [1]]
    with pytest.raises(ValueError, match="max_tokens"):
        token_budget_batches(lengths, order, max_tokens=0, max_rows=4)


def test_prefetch_runs_ahead_and_reraises_the_producers_error():
    made: list[int] = []

    def produce():
        for i in range(6):
            made.append(i)
            yield i
        raise RuntimeError("tokenizer broke at the end")

    got = []
    with pytest.raises(RuntimeError, match="tokenizer broke"):
        for item in prefetch(produce, depth=2):
            if item == 0:
                deadline = time.monotonic() + 5
                while len(made) < 4 and time.monotonic() < deadline:  # the thread works ahead of the consumer
                    time.sleep(0.01)
                time.sleep(0.2)  # time to go further, were it not bounded
                assert len(made) == 4  # ...by the queue's depth (2) plus the item it waits to put, no further
            got.append(item)
    assert got == [0, 1, 2, 3, 4, 5]


def test_prefetch_consumer_stopping_early_releases_the_producer():
    finished = threading.Event()

    def produce():
        try:
            yield from range(10_000)
        finally:
            finished.set()

    for item in prefetch(produce, depth=2):
        if item == 3:
            break
    assert finished.wait(5)
