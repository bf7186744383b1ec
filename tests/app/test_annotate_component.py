"""The queue component's server side (issue 20): texts travel as plain segments, the script is packaged."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from pooljudge.ui.annotate_component import FRONTEND, segments
from pooljudge.ui.ranked_component import FRONTEND as RANKED_FRONTEND

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


def test_the_scripts_never_parse_markup_and_are_packaged():
    """The Annotate queue and the Review page's ranked list (pooljudge/ui/ranked_component)."""
    for frontend in (FRONTEND, RANKED_FRONTEND):
        script = (frontend / "main.js").read_text(encoding="utf-8")
        assert "innerHTML" not in script and "insertAdjacentHTML" not in script and "eval(" not in script
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    data = config["tool"]["setuptools"]["package-data"]["pooljudge"]
    folders = ("ui/annotate_component/frontend", "ui/ranked_component/frontend")
    assert {f"{folder}/*.{ext}" for folder in folders for ext in ("js", "css")} <= set(data)
    components = config["tool"]["streamlit"]["component"]["components"]
    assert [c["name"] for c in components] == ["annotate_queue", "ranked_list"]
    assert [REPO / "pooljudge" / c["asset_dir"] for c in components] == [FRONTEND, RANKED_FRONTEND]
    assert all((folder / name).is_file() for folder in (FRONTEND, RANKED_FRONTEND) for name in ("main.js", "style.css"))
