"""One list of default measures: `pooljudge eval`, the Metrics page and the Error analysis page read core.metrics."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from core import metrics
from pooljudge.cli import main

ROOT = Path(__file__).resolve().parents[1]
USERS = ["pooljudge/cli/eval_.py", "views/metrics.py", "views/errors.py"]


def test_the_defaults_are_valid_measures_inside_the_choices():
    assert metrics.DEFAULT_MEASURES == ("MRR@10", "nDCG@10", "R@100", "MAP", "Judged@10")
    assert metrics.MEASURE_CHOICES[: len(metrics.DEFAULT_MEASURES)] == metrics.DEFAULT_MEASURES
    assert len(set(metrics.MEASURE_CHOICES)) == len(metrics.MEASURE_CHOICES)
    assert [str(metrics.parse_measure(m)) for m in metrics.MEASURE_CHOICES] == list(metrics.MEASURE_CHOICES)


def _measure_literals(path: Path) -> list[str]:
    """The string constants of a module that parse as a measure with a cutoff (``nDCG@10``, ``R@100``, ...)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "@" in node.value:
            try:
                metrics.parse_measure(node.value)
            except ValueError:
                continue
            found.append(node.value)
    return found


@pytest.mark.parametrize("module", USERS)
def test_no_user_spells_a_measure_list_of_its_own(module):
    path = ROOT / module
    assert _measure_literals(path) == []
    source = path.read_text(encoding="utf-8")
    assert "DEFAULT_MEASURES" in source or "MEASURE_CHOICES" in source


def test_eval_without_measures_prints_the_defaults(tmp_path, capsys):
    qrels = tmp_path / "t.qrels"
    qrels.write_text("q1 0 a 1\nq1 0 b 2\n", encoding="utf-8")
    run = tmp_path / "t.run"
    run.write_text("q1 Q0 a 1 2.0 x\nq1 Q0 c 2 1.0 x\n", encoding="utf-8")
    assert main(["eval", str(qrels), str(run)]) == 0
    printed = [line.split("\t")[0] for line in capsys.readouterr().out.splitlines()]
    assert printed == list(metrics.DEFAULT_MEASURES)
