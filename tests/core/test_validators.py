"""core.validators: the one home of the argument checks, and its use across core."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from core import validators as v
from core.validators import ArgumentTypeError

ROOT = Path(__file__).resolve().parents[2]


def test_positive_int_accepts_python_and_numpy_ints_and_returns_int():
    assert v.positive_int(3, "k") == 3
    out = v.positive_int(np.int64(7), "k")
    assert out == 7 and type(out) is int


@pytest.mark.parametrize("bad", [True, False, 1.0, "3", None, np.float64(2.0)])
def test_positive_int_refuses_non_integers_with_a_type_error_that_is_also_a_value_error(bad):
    with pytest.raises(ArgumentTypeError, match=re.escape(f"k must be a positive integer, got {bad!r}")) as info:
        v.positive_int(bad, "k")
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


def test_out_of_range_is_a_plain_value_error_naming_the_argument():
    with pytest.raises(ValueError) as info:
        v.positive_int(0, "depth")
    assert str(info.value) == "depth must be a positive integer, got 0"
    assert not isinstance(info.value, TypeError)
    assert (
        str(pytest.raises(ValueError, v.non_negative_int, -1, "n").value) == "n must be a non-negative integer, got -1"
    )
    assert v.non_negative_int(0, "n") == 0
    assert str(pytest.raises(ValueError, v.optional_positive_int, 0, "depth").value) == (
        "depth must be a positive integer or None, got 0"
    )
    assert v.optional_positive_int(None, "depth") is None


def test_int_in_range_messages():
    assert v.int_in_range(5, "size", 1) == 5
    assert str(pytest.raises(ValueError, v.int_in_range, 0, "size", 1).value) == "size must be an integer >= 1, got 0"
    assert str(pytest.raises(ValueError, v.int_in_range, 2**31, "level", 1, 2**31 - 1).value) == (
        "level must be an integer >= 1 (at most 2147483647), got 2147483648"
    )
    assert v.int_in_range(2**31 - 1, "level", 1, 2**31 - 1) == 2**31 - 1
    assert str(pytest.raises(ValueError, v.integer, True, "seed").value) == "seed must be an integer, got True"


@pytest.mark.parametrize(
    ("value", "kwargs", "message"),
    [
        (2, {"low": 0, "high": 1}, "alpha must be a number in [0, 1], got 2"),
        (math.nan, {"low": 0, "high": 1}, "alpha must be a number in [0, 1], got nan"),
        (math.inf, {"low": 0}, "alpha must be a finite number >= 0, got inf"),
        (-0.5, {"low": 0}, "alpha must be a finite number >= 0, got -0.5"),
        (
            1,
            {"low": 0, "high": 1, "low_open": True, "high_open": True},
            "alpha must be a number strictly between 0 and 1, got 1",
        ),
        (0, {"low": 0, "high": 1, "low_open": True}, "alpha must be a number in (0, 1], got 0"),
        (math.nan, {}, "alpha must be a finite number, got nan"),
        (True, {"low": 0, "high": 1}, "alpha must be a number in [0, 1], got True"),
        ("0.5", {"low": 0, "high": 1}, "alpha must be a number in [0, 1], got '0.5'"),
    ],
)
def test_real_number_refuses_with_the_interval_in_the_message(value, kwargs, message):
    with pytest.raises(ValueError) as info:
        v.real_number(value, "alpha", **kwargs)
    assert str(info.value) == message


def test_real_number_accepts_bounds_and_numpy_scalars():
    assert v.real_number(0, "alpha", low=0, high=1) == 0.0
    assert v.real_number(np.float32(0.25), "alpha", low=0, high=1) == 0.25
    assert v.real_number(1, "p", low=0, high=1, low_open=True) == 1.0
    assert v.real_number(math.inf, "x", finite=False) == math.inf


def test_pair():
    assert v.pair(("q1", "d1")) == ("q1", "d1")
    for bad in (["q1", "d1"], ("q1",), ("q1", 2), "q1"):
        with pytest.raises(
            ValueError, match=re.escape(f"a pair must be a (query_id, doc_id) tuple of str, got {bad!r}")
        ):
            v.pair(bad)


def test_callers_refuse_bool_through_the_shared_validators():
    from core.assignment import plan_assignments
    from core.fusion import check_alpha, rrf
    from core.pooling import depth_pool
    from core.qc import sample_for_qc

    with pytest.raises(ValueError, match=re.escape("depth must be a positive integer, got True")):
        depth_pool({"r": {"q": {"d": 1.0}}}, True)
    with pytest.raises(ValueError, match=re.escape("depth must be a positive integer or None, got True")):
        rrf([{"q": {"d": 1.0}}], depth=True)
    with pytest.raises(ValueError, match=re.escape("alpha must be a number in [0, 1], got True")):
        check_alpha(True)
    with pytest.raises(ValueError, match=re.escape("seed must be an integer, got True")):
        plan_assignments([("q", "d")], ["a", "b"], per_pair=1, seed=True)
    with pytest.raises(ValueError, match=re.escape("a pair must be a (query_id, doc_id) tuple of str, got ['q', 'd']")):
        sample_for_qc([["q", "d"]], size=1, seed=0)


def test_no_private_copies_of_the_checks_remain_in_core():
    """The ``isinstance(x, bool)`` guard and the _check_* copies live in core.validators only.

    core/formats is another reader's module and core/text.py checks flags (bool is what it wants).
    """
    pattern = re.compile(r"isinstance\([^)]*, bool\)|def _check_(pair|positive_int|k|int|seed)\b")
    files = [p for p in sorted((ROOT / "core").rglob("*.py")) if p.parts[-2] != "formats"]
    left = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in [*files, ROOT / "pooljudge" / "pipeline.py"]
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
        and p.name not in ("validators.py", "text.py")
        and "isinstance(value, bool):" not in line
    ]  # pipeline.py prints a bool option as true/false
    assert left == []


def test_retriever_and_detector_options_refuse_bool():
    from core.detectors import detect_term_overlap
    from core.retrieval.bm25 import BM25Retriever
    from core.retrieval.dense import DenseRetriever
    from core.text import analyzer_for

    class Encoder:
        dim, fingerprint = 2, "stub"

        def encode(self, texts, *, kind="passage", progress=None):
            return np.zeros((len(texts), 2), dtype=np.float32)

    with pytest.raises(ValueError, match=re.escape("nlist must be a positive integer or None, got True")):
        DenseRetriever(Encoder(), nlist=True)
    with pytest.raises(ValueError, match=re.escape("ef_search must be a positive integer, got True")):
        DenseRetriever(Encoder(), ef_search=True)
    with pytest.raises(ValueError, match=re.escape("b must be a number in [0, 1], got 1.5")):
        BM25Retriever(analyzer_for("en"), b=1.5)
    with pytest.raises(ValueError, match=re.escape("k1 must be a finite number >= 0, got -1")):
        BM25Retriever(analyzer_for("en"), k1=-1)
    with pytest.raises(ValueError, match=re.escape("threshold must be a number in (0, 1], got True")):
        detect_term_overlap("a b", "a b", label=0, threshold=True)
