"""The demo builder and the benchmarks take the scale and the CJK blocks from their one home (issue 10).

``core.scale`` holds the grades and ``core.lang.CJK_RANGES`` the CJK
ideograph blocks; ``tests/core/test_scale.py`` checks the library modules,
this file the scripts around them.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from core.lang import CJK_IDEOGRAPH_CLASS
from tests.core.test_scale import _literal_scales
from tools.build_demo import Tokenizers

_RANGE = re.compile(f"[{CJK_IDEOGRAPH_CLASS}]-[{CJK_IDEOGRAPH_CLASS}]")
REPO = Path(__file__).resolve().parents[1]
SCRIPTS = ["tools/build_demo.py", *sorted(str(p.relative_to(REPO)) for p in (REPO / "benchmarks").glob("*.py"))]


def _cjk_literals(path: Path) -> list[int]:
    """Lines of ``path`` whose string constants hold a character range between CJK ideographs (``"\\u4e00-\\u9fff"``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _RANGE.search(node.value)
    ]


@pytest.mark.parametrize("script", SCRIPTS)
def test_scripts_spell_out_no_scale(script: str) -> None:
    assert _literal_scales(REPO / script) == [], f"{script} spells out the scale; import it from core.scale"


@pytest.mark.parametrize("script", SCRIPTS)
def test_scripts_define_no_cjk_class(script: str) -> None:
    assert _cjk_literals(REPO / script) == [], f"{script} spells out CJK blocks; use core.lang"


def test_the_detectors_find_a_copy(tmp_path: Path) -> None:
    copy = tmp_path / "copy.py"
    copy.write_text(
        'TEXT = "检索评测"\n_CJK = "\\u3400-\\u4dbf\\u4e00-\\u9fff"\nGRADES = (0, 1, 2, 3)\n', encoding="utf-8"
    )
    assert _cjk_literals(copy) == [2]
    assert _literal_scales(copy) == [3]


def test_demo_bigrams_cover_every_cjk_block() -> None:
    # Extension B ideographs were split as one "word" by the demo's own, narrower character class
    ext_b = "\U00020000\U00020001\U00020002"
    assert Tokenizers.bigrams(ext_b, "zh") == [ext_b[:2], ext_b[1:]]
    assert Tokenizers.bigrams("检索a评测", "zh") == ["检索", "a", "评测"]
