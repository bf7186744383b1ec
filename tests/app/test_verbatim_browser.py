"""Acceptance (issue 9, finding 8): untrusted text reaches the screen exactly as stored, in real Chromium.

A collection whose query, title and passage hold URLs, e-mail addresses,
``:smile:``, ``:red[x]``, ``**x**``, ``<b>``, ``$x$``, a Markdown image, CJK,
runs of spaces and line breaks is imported through ``pooljudge import`` into
the shared server's store.  The Annotate page (as an annotator of its own)
and the Review page (as a reviewer) must show each text verbatim:
``innerText`` equals the stored text, and nothing (no link, image, emoji,
math or coloured span) was made out of it; query terms are still marked.
A tiny script checks ``md_escape`` in the Markdown-only places (captions,
expander and button labels, alerts) the same way.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import pytest

from tests.app.browser_helpers import REPO, cli, login, screenshot, serve_app, wait_for_js, wait_for_value

pytestmark = pytest.mark.browser

QUERY = "How tall is the tower? :smile: **really** www.query-site.org $h$"
TITLE = "Eiffel **Tower** :red[title] <i>not italic</i> ann@example.org"
PASSAGE = (
    "Tower facts: https://en.wikipedia.org/wiki/Eiffel_Tower_(Paris) and www.example.com,\n"
    "mail tower.facts@example.org :smile: :red[tall] **bold** <b>not bold</b> $x^2$ :material/home:\n"
    '[link](http://e.com) ![img](http://127.0.0.1:9/remote.png) <img src="http://127.0.0.1:9/x.png">\n'
    "埃菲尔铁塔高330米，tower 在巴黎。\n"
    "\n"
    "  two  spaces,\tand an indented line"
)
MARKER = "埃菲尔铁塔"  # finds the passage element on the page
# what Markdown (or unescaped HTML) would have produced out of the texts above
MADE_UP = "a, img, .katex, span[role='img'], [style*='color'], .stMarkdownColoredText, strong, em, i, b"
APP_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
ANNOTATOR = "verbatim-ann1"  # this module's own: its queue holds the tricky pair alone


@contextlib.contextmanager
def _serve(script: Path, log: Path, env: dict | None = None):
    """``streamlit run script`` (no serve.py: the script is not the app) on a free port until the block ends;
    yields the base URL."""
    full_env = {**os.environ, **APP_ENV, **(env or {})}
    full_env.pop("POOLJUDGE_DB_URL", None)
    with serve_app(full_env, log, script=script, plain=True) as url:
        yield url


@pytest.fixture(scope="module")
def verbatim_app(app_server, tmp_path_factory):
    """The shared server, its store holding the tricky collection, pooled and assigned to ANNOTATOR."""
    folder = tmp_path_factory.mktemp("verbatim-beir")
    (folder / "runs").mkdir()
    (folder / "corpus.jsonl").write_text(
        json.dumps({"_id": "d1", "title": TITLE, "text": PASSAGE}, ensure_ascii=False)
        + "\n"
        + json.dumps({"_id": "d2", "title": "", "text": "An unrelated passage."})
        + "\n",
        encoding="utf-8",
    )
    (folder / "queries.jsonl").write_text(
        json.dumps({"_id": "q1", "text": QUERY}, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    (folder / "runs" / "r.trec").write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\n", encoding="utf-8")
    db = app_server["db"]
    cli(db, "user", "add", ANNOTATOR, "--role", "annotator")
    cli(db, "import", "-f", "beir", str(folder), "-c", "tricky")
    cli(db, "pool", "-c", "tricky", "--name", "p", "--run", "r", "--depth", "1")  # d1 only
    cli(db, "assign", "-c", "tricky", "--pool", "p", "--annotators", ANNOTATOR, "--per-pair", "1", "--seed", "1")
    return app_server["url"]


def _html_with(
    page, text: str, timeout: int = 60_000, *, selector: str = '[data-testid="stMain"] [data-testid="stHtml"]'
):
    """The element (st.html by default) in the main area whose text contains ``text`` (waits for it)."""
    wait_for_js(
        page,
        """([selector, text]) => [...document.querySelectorAll(selector)].some((e) => e.innerText.includes(text))""",
        arg=[selector, text],
        timeout=timeout,
    )
    return page.locator(selector).filter(has_text=text).first


def _assert_verbatim(element, expected: str) -> None:
    wait_for_value(element.inner_text, expected, what="the text shown")
    made_up = element.evaluate(f"(e) => [...e.querySelectorAll({json.dumps(MADE_UP)})].map((x) => x.outerHTML)")
    assert made_up == []


def _assert_marked(element, *terms: str) -> None:
    """``terms`` are marked, and every mark is a word of the query."""
    marks = {m.lower() for m in element.locator("mark").all_inner_texts()}
    assert set(terms) <= marks and all(m in QUERY.lower() for m in marks), marks


def test_annotate_page_shows_query_title_and_passage_verbatim(verbatim_app, page):
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    login(page, verbatim_app, ANNOTATOR)
    page.get_by_text("Passage", exact=True).wait_for(timeout=60_000)
    queue = '[data-testid="stMain"] [data-testid="annotate-queue"] .pj-verbatim'  # the queue's text elements
    passage = _html_with(page, MARKER, selector=queue)
    _assert_verbatim(passage, PASSAGE)
    _assert_marked(passage, "tower", "tall")  # query terms still highlighted, Latin and inside CJK text
    title = _html_with(page, "not italic", selector=queue)
    wait_for_value(title.inner_text, TITLE, what="the title")  # (in bold: not checked for made-up <b>)
    _assert_marked(title, "tower")
    query = _html_with(page, "www.query-site.org", selector=queue)
    _assert_verbatim(query, QUERY)
    assert not any("127.0.0.1:9" in url for url in requests)  # no remote image was fetched
    screenshot(page, "verbatim-annotate")


def test_review_page_shows_the_pair_verbatim(verbatim_app, page):
    login(page, verbatim_app, "rev1", path="/review?collection=tricky")
    # the shared server's Review page reads a bigger store than this collection: generous waits on a loaded machine
    page.get_by_role("heading", name="Review").first.wait_for(timeout=120_000)
    page.get_by_role("tab", name="Pairs", exact=True).click()
    page.get_by_text("Override a final label").wait_for(timeout=120_000)
    passage = _html_with(page, MARKER, 120_000)
    _assert_verbatim(passage, PASSAGE)
    _assert_marked(passage, "tower", "tall")
    wait_for_value(_html_with(page, "not italic").inner_text, TITLE, what="the title")
    _assert_verbatim(_html_with(page, "www.query-site.org"), QUERY)
    screenshot(page, "verbatim-review")


# md_escape, where only Markdown can go: the browser shows the text (less the invisible word joiners that
# break autolinks) and makes nothing of it.
LABEL = "www.example.com a.b@example.org https://x.org/a_(b) :smile: :red[x] **x** <b>x</b> $x$ :material/home: 中文"
LABEL_SCRIPT = f"""
import streamlit as st
from pooljudge.ui.common import md_escape

TEXT = {LABEL!r}
st.title("Labels")
st.markdown(md_escape(TEXT))
st.caption(md_escape(TEXT))
st.error(md_escape(TEXT))
with st.expander(md_escape(TEXT)):
    st.write("inside")
st.button(md_escape(TEXT))
st.tabs([md_escape(TEXT), "other"])
st.metric("metric", md_escape(TEXT))
st.caption("end of page")
"""


def test_md_escape_labels_render_literally(tmp_path, page):
    script = tmp_path / "labels.py"  # a server of its own: it serves this script, not the app
    script.write_text(LABEL_SCRIPT, encoding="utf-8")
    with _serve(script, tmp_path / "streamlit.log", {"PYTHONPATH": str(REPO)}) as url:
        page.goto(url)
        page.get_by_text("end of page").wait_for(timeout=60_000)
        selectors = [
            '[data-testid="stMarkdown"]:not(:has(h1))',
            '[data-testid="stCaptionContainer"]',
            '[data-testid="stAlert"]',
            '[data-testid="stExpander"] summary [data-testid="stMarkdownContainer"]',
            '[data-testid="stButton"]',
            '[data-testid="stTab"]',
            '[data-testid="stMetricValue"]',
        ]
        for selector in selectors:
            element = page.locator(selector).first
            element.wait_for(timeout=30_000)
            wait_for_value(lambda e=element: e.inner_text().replace("\u2060", "").strip(), LABEL, what=selector)
            made_up = element.evaluate(
                "(e) => [...e.querySelectorAll('a, img, .katex, span[role=img], "
                "[style*=color], strong, b')].map((x) => x.outerHTML)"
            )
            assert made_up == [], selector
