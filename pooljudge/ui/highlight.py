"""Untrusted text shown verbatim: escaped HTML for ``st.html``, query terms marked.

Passages, queries, titles, notes and names come from imported files and other
users.  They are rendered through ``st.html`` (HTML sanitised by DOMPurify, no
Markdown processing) rather than ``st.markdown``, which would turn URLs and
e-mail addresses into links, ``:smile:`` into an emoji, ``:red[x]`` into
coloured text and ``$x$`` into math.  Every character of the text is
HTML-escaped; the only tags are ours: ``<mark>`` around query-term matches,
``<br>`` for line breaks, one wrapping ``<div>``.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache

import streamlit as st
from bm25s.stopwords import STOPWORDS_CHINESE

from core.text import Analyzer, analyzer_for, highlight_spans

# Retrieval keeps Chinese function words (idf down-weights them), but marking every 的 and 是 a query
# shares with the passage only hides the words that matter.
_NOT_HIGHLIGHTED = frozenset(STOPWORDS_CHINESE)

# Line breaks become <br> rather than staying "\n" under white-space: pre-wrap, because st.html dedents
# and strips its body (textwrap.dedent turns whitespace-only lines into empty ones); with no "\n" left
# the body is one line and reaches the browser unchanged.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")

# pre-wrap keeps runs of spaces and tabs as stored (HTML would collapse them); overflow-wrap breaks long
# URLs and ids instead of widening the page; the font follows the app's body text (st.html inherits it).
_KEEP_SPACES = "white-space: pre-wrap; overflow-wrap: anywhere"
VERBATIM_STYLE = _KEEP_SPACES + "; line-height: 1.6; margin: 0"
# like st.caption: smaller and muted (opacity rather than a colour, so dark themes work too)
SMALL_STYLE = "; font-size: 0.875rem; opacity: 0.75"
VERBATIM_CLASS = "pj-verbatim"
"""Class of the ``<div>`` that :func:`verbatim_html` wraps text in (browser tests find the text by it)."""


@lru_cache(maxsize=8)
def _analyzer(language: str | None) -> Analyzer:
    return analyzer_for(language if language in ("en", "zh", "mixed") else "mixed")


def _escape(text: str) -> str:
    # quote=False: text nodes only, so quotes can stay quotes; no Markdown runs over st.html bodies, so
    # no Markdown syntax needs neutralising.
    return _LINE_BREAK.sub("<br>", html.escape(text, quote=False))


def escape_text(text: str) -> str:
    """``text`` escaped for an HTML text node (``st.html``), line breaks as ``<br>``; the one escaping of the UI."""
    return _escape(text)


def highlighted_html(query: str | None, text: str, language: str | None, *, mark: bool = True) -> str:
    """``text`` as HTML for ``st.html``, shown exactly as stored, query-term matches in ``<mark>``.

    Every character is escaped, line breaks become ``<br>`` and a
    ``white-space: pre-wrap`` span keeps runs of spaces, so
    ``st.html(highlighted_html(...))`` (or inside ``<b>...</b>``) shows the
    text verbatim.  The mixed analyzer (jieba for CJK runs, stemmed words for
    Latin) is used for Chinese and mixed texts; since a short query and a
    passage are segmented differently (吃饺子 against 饺子), every run of two
    or more CJK characters the passage shares with the query is marked too
    (:func:`core.text.common_cjk_runs`), without function words such as 是
    and 的 at its ends.  Not for ``st.markdown``: Markdown would interpret the
    escaped text.  :func:`show_text` is the one-call way to render it.
    """
    return f'<span style="{_KEEP_SPACES}">{_marked(query, text, language, mark)}</span>'


def _marked(query: str | None, text: str, language: str | None, mark: bool = True) -> str:
    """The escaped text with ``<mark>`` around query-term matches and ``<br>`` for line breaks."""
    spans = highlight_spans(query, text, _analyzer(language), ignore=_NOT_HIGHLIGHTED) if mark and query else []
    parts, last = [], 0
    for start, end in spans:
        parts.append(_escape(text[last:start]))
        parts.append(f"<mark>{_escape(text[start:end])}</mark>")
        last = end
    parts.append(_escape(text[last:]))
    return "".join(parts)


def verbatim_html(
    text: str,
    *,
    query: str | None = None,
    language: str | None = None,
    bold: bool = False,
    small: bool = False,
    label: str | None = None,
) -> str:
    """A ``<div>`` showing ``text`` exactly as stored (escaped, line breaks and spaces kept), for ``st.html``.

    With ``query``, its terms are marked as in :func:`highlighted_html`.
    ``bold`` for titles, ``small`` for secondary text shown like ``st.caption``
    (notes, evidence); ``label`` (an id, say; escaped too) is shown in bold
    before the text, followed by " · ".
    """
    style = VERBATIM_STYLE + ("; font-weight: 600" if bold else "") + (SMALL_STYLE if small else "")
    prefix = "" if label is None else f"<b>{_escape(label)}</b> · "
    return f'<div class="{VERBATIM_CLASS}" style="{style}">{prefix}{_marked(query, text, language)}</div>'


def chart_text(text: str) -> str:
    """``text`` for a plotly label (axis category, legend entry, hover text, title), drawn exactly as stored.

    Plotly draws a subset of HTML in every label (``<b>``, ``<i>``, ``<br>``,
    ``<sup>``, ``<a href>``, ``<span style>``) and decodes ``&amp;``,
    ``&lt;``, ``&gt;`` and numeric entities, so ``&``, ``<`` and ``>`` become
    entities and are drawn as themselves.  Quotes stay: plotly does not
    decode ``&quot;``, it would show it literally.  The escaping is
    one-to-one, so distinct values stay distinct categories.
    """
    return html.escape(text, quote=False)


def show_text(
    text: str,
    *,
    query: str | None = None,
    language: str | None = None,
    container=None,
    bold: bool = False,
    small: bool = False,
    label: str | None = None,
) -> None:
    """Render untrusted ``text`` verbatim via ``st.html`` (never Markdown), query terms marked when given.

    ``container`` is any Streamlit container or column (default: the page).
    An empty text without a label renders nothing (there is nothing to show).
    """
    if text or label:
        (container or st).html(
            verbatim_html(text or "", query=query, language=language, bold=bold, small=small, label=label)
        )
