"""The app ends runs early with ``stop_run``, never ``st.stop()`` (which drops a click queued during the run).

The browser side (a click during a waiting run is shown after it) is ``test_queued_click_browser.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[2]
ST_STOP = re.compile(r"\bst\.stop\(\)")


def _code_lines(path: Path) -> list[str]:
    """``path``'s lines outside docstrings and comments (a docstring may name ``st.stop()`` to say why not)."""
    import ast
    import io
    import tokenize

    text = path.read_text(encoding="utf-8")
    docstrings = set()
    for node in ast.walk(ast.parse(text)):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            docstrings.update(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
    comments = {t.start[0] for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT}
    return [
        line.split("#", 1)[0] if n in comments else line
        for n, line in enumerate(text.splitlines(), start=1)
        if n not in docstrings
    ]


def test_no_page_or_ui_module_calls_st_stop():
    files = [REPO / "app.py", REPO / "serve.py", *sorted((REPO / "views").glob("*.py"))]
    files += sorted((REPO / "pooljudge").rglob("*.py"))
    calls = [f"{p.relative_to(REPO)}: {line.strip()}" for p in files for line in _code_lines(p) if ST_STOP.search(line)]
    assert calls == []
    # the helper is what they use instead
    assert "stop_run()" in (REPO / "pooljudge" / "ui" / "background.py").read_text(encoding="utf-8")


def test_stop_run_ends_the_run_where_it_is_called_and_keeps_what_was_drawn():
    def script():
        import streamlit as st

        from pooljudge.ui.script_control import stop_run

        st.info("before the stop")
        if st.button("go on"):
            st.success("the button's run went past the first stop")
        else:
            stop_run()
        st.error("after the stop")

    at = AppTest.from_function(script).run(timeout=30)
    assert not at.exception
    assert [a.value for a in at.info] == ["before the stop"]
    assert [e.value for e in at.error] == []  # nothing after the stop was drawn
    at.button[0].click().run(timeout=30)  # the page still answers: the stop ended one run, not the session
    assert not at.exception
    assert [s.value for s in at.success] == ["the button's run went past the first stop"]
    assert [e.value for e in at.error] == ["after the stop"]
