"""Untrusted text reaches the page verbatim: escaped HTML for st.html, Markdown-proof labels, query terms marked."""

import html
import re

import pytest

from pooljudge.ui.common import WORD_JOINER, md_escape
from pooljudge.ui.highlight import VERBATIM_CLASS, highlighted_html, verbatim_html

TRICKY = {
    "url": "https://en.wikipedia.org/wiki/Eiffel_Tower_(Paris)",
    "www": "www.example.com",
    "email": "ann.one@example.org",
    "emoji": ":smile:",
    "colour": ":red[x]",
    "bold": "**x**",
    "tag": "<b>x</b>",
    "math": "$x$",
    "icon": ":material/home:",
    "cjk": "埃菲尔铁塔高330米",
}
TAG = re.compile(r"<(?!/?(mark|br)>)")  # any tag other than the <mark> and <br> we add
SPAN = '<span style="white-space: pre-wrap; overflow-wrap: anywhere">'  # keeps runs of spaces


def hl(*args, **kwargs) -> str:
    """highlighted_html's output inside its one wrapping span."""
    out = highlighted_html(*args, **kwargs)
    assert out.startswith(SPAN) and out.endswith("</span>") and out.count("<span") == 1
    return out[len(SPAN) : -len("</span>")]


def _text_of(fragment: str) -> str:
    """What a browser shows for a fragment: <br> a line break, tags dropped, entities decoded."""
    return html.unescape(re.sub(r"</?mark>", "", fragment.replace("<br>", "\n")))


@pytest.mark.parametrize("case", TRICKY)
def test_every_tricky_text_comes_back_exactly(case):
    text = f"before {TRICKY[case]} after"
    out = hl("nothing in common", text, "en")
    assert _text_of(out) == text
    assert not TAG.search(out)  # no tag of the text's own survived: "<b>" is "&lt;b&gt;"


def test_no_markdown_entities_are_left():
    # the old st.markdown path turned "." into "&#46;", so "en.wikipedia.org" showed as "en&#46;wikipedia&#46;org"
    out = hl("tower", TRICKY["url"] + " **bold** $x$", "en")
    assert "&#" not in out
    assert out == "https://en.wikipedia.org/wiki/Eiffel_<mark>Tower</mark>_(Paris) **bold** $x$"


def test_html_is_escaped_and_terms_marked():
    out = hl("script", "<script>alert(1)</script> <img src=x onerror=alert(2)>", "en")
    assert out == "&lt;<mark>script</mark>&gt;alert(1)&lt;/<mark>script</mark>&gt; &lt;img src=x onerror=alert(2)&gt;"


def test_line_breaks_become_br_and_spaces_stay():
    out = hl("", "line one\nline  two\r\n\n  three\rfour", "en")
    assert out == "line one<br>line  two<br><br>  three<br>four"
    assert "\n" not in out and "\r" not in out  # st.html dedents multi-line bodies: one line reaches it intact


def test_verbatim_html_wraps_in_a_pre_wrap_div():
    out = verbatim_html("a  b\nc", query="b", language="en", bold=True)
    assert out.startswith(f'<div class="{VERBATIM_CLASS}" style="white-space: pre-wrap;')
    assert "font-weight: 600" in out
    assert out.endswith(">a  <mark>b</mark><br>c</div>")


def test_no_query_marks_nothing():
    assert hl(None, "Baking bread", "en") == "Baking bread"
    assert hl("bread", "Baking bread", "en", mark=False) == "Baking bread"


def test_english_stems_and_chinese_words_are_marked():
    assert hl("bake bread", "Baking bread at home", "en") == "<mark>Baking</mark> <mark>bread</mark> at home"
    out = hl("台北怎么去瑞芳", "从瑞芳回台北可以坐火车", "zh")
    assert out == "从<mark>瑞芳</mark>回<mark>台北</mark>可以坐火车"


def test_quotes_render_as_themselves():
    out = hl("fair", 'The "World\'s Fair" of 1889', "en")
    assert out == 'The "World\'s <mark>Fair</mark>" of 1889'


def test_chinese_function_words_are_not_marked():
    out = hl("故宫是哪一年开始修建的", "故宫是明朝永乐年间开始修建的宫殿", "zh")
    assert "<mark>故宫</mark>" in out and "<mark>修建</mark>" in out
    assert "<mark>是</mark>" not in out and "<mark>的</mark>" not in out


# md_escape, for the labels that can only be Markdown.  What the browser makes of it is checked in
# tests/app/test_verbatim_browser.py; here: the Markdown syntax that would fire is gone from the source.
STREAMLIT_EMOJI_GATE = re.compile(r":(?!material/|streamlit:)[\w+-][\w_+-]*:")  # Streamlit loads remark-emoji on this
GFM_WWW_OR_URL = re.compile(r"(https?://|www(?=\.))", re.IGNORECASE)  # mdast-util-gfm-autolink-literal
GFM_EMAIL = re.compile(r"[-.+\w]+@[-\w]+(\.[-\w]+)+")


@pytest.mark.parametrize("case", TRICKY)
def test_md_escape_leaves_no_markdown_syntax(case):
    out = md_escape(TRICKY[case])
    unescaped = re.sub(r"\\(.)", r"\1", out).replace(WORD_JOINER, "")  # what Markdown's escapes resolve to
    assert unescaped == TRICKY[case]
    assert re.fullmatch(
        r"(\\[!-/:-@\[-`{-~]|[^!-/:-@\[-`{-~])*", out.replace(WORD_JOINER, "")
    )  # all punctuation escaped
    assert not STREAMLIT_EMOJI_GATE.search(out)  # so ":smile:" in the parsed text is never looked up
    parsed = re.sub(r"\\(.)", r"\1", out)  # the text node remark-gfm and remark-emoji search
    assert not GFM_WWW_OR_URL.search(parsed) and not GFM_EMAIL.search(parsed)


def test_md_escape_keeps_cjk_and_plain_words():
    assert md_escape("埃菲尔铁塔 tower 330") == "埃菲尔铁塔 tower 330"


def test_verbatim_html_label_is_escaped_too():
    assert verbatim_html("a *b*", label="<q1>").endswith("><b>&lt;q1&gt;</b> · a *b*</div>")
    assert "font-size: 0.875rem" in verbatim_html("note", small=True)
