"""The queue component's server side (issue 20): texts travel as plain segments, the script is packaged."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from pooljudge.ui.annotate_component import FRONTEND, segments

REPO = Path(__file__).resolve().parents[2]


def test_segments_keep_the_text_exactly_and_mark_only_query_terms():
    text = 'The <b>tower</b> is tall:\n  <img src="x" onerror="alert(1)">'
    parts = segments("how tall is the tower", text, "en")
    assert "".join(piece for piece, _marked in parts) == text  # nothing escaped, dropped or added: textContent shows it
    assert [piece for piece, marked in parts if marked] == ["tower", "tall"]
    assert segments(None, "no query", "en") == [["no query", False]]
    assert segments("q", "", "en") == []


@pytest.mark.slow  # loads jieba's dictionary
def test_chinese_terms_are_marked_without_function_words():
    parts = segments("埃菲尔铁塔有多高", "埃菲尔铁塔高330米", "zh")
    assert "".join(p for p, _m in parts) == "埃菲尔铁塔高330米"
    assert any(marked and "铁塔" in piece for piece, marked in parts)


def test_the_script_never_parses_markup_and_is_packaged():
    script = (FRONTEND / "main.js").read_text(encoding="utf-8")
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script and "eval(" not in script
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    data = config["tool"]["setuptools"]["package-data"]["pooljudge"]
    assert {"ui/annotate_component/frontend/*.js", "ui/annotate_component/frontend/*.css"} <= set(data)
    [component] = config["tool"]["streamlit"]["component"]["components"]
    assert component["name"] == "annotate_queue"
    assert (REPO / "pooljudge" / component["asset_dir"] / "main.js").is_file()
