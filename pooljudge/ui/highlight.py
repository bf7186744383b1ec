"""Query-term highlighting rendered as escaped HTML (untrusted text never reaches the page unescaped)."""

from __future__ import annotations

import html
from functools import lru_cache

from bm25s.stopwords import STOPWORDS_CHINESE

from core.text import Analyzer, analyzer_for, highlight_spans

# Retrieval keeps Chinese function words (idf down-weights them), but marking every 的 and 是 a query
# shares with the passage only hides the words that matter.
_NOT_HIGHLIGHTED = frozenset(STOPWORDS_CHINESE)


@lru_cache(maxsize=8)
def _analyzer(language: str | None) -> Analyzer:
    return analyzer_for(language if language in ("en", "zh", "mixed") else "mixed")


def highlighted_html(query: str, text: str, language: str | None, *, mark: bool = True) -> str:
    """``text`` as HTML: every character escaped, query-term matches wrapped in ``<mark>``.

    The mixed analyzer (jieba for CJK runs, stemmed words for Latin) is used for Chinese
    and mixed texts, so highlighting works on Chinese passages too.
    """
    spans = highlight_spans(query, text, _analyzer(language), ignore=_NOT_HIGHLIGHTED) if mark else []
    parts, last = [], 0
    for start, end in spans:
        parts.append(html.escape(text[last:start], quote=False))
        parts.append(f"<mark>{html.escape(text[start:end], quote=False)}</mark>")
        last = end
    parts.append(html.escape(text[last:], quote=False))  # quotes stay: text nodes only, and "&#x27;" would meet the "#" rule below
    # Streamlit's markdown would still interpret markdown syntax inside the escaped text
    # (e.g. "*" or "[x](y)"); escaping those characters as entities keeps it literal.
    return "".join(parts).translate(_MARKDOWN_ENTITIES).replace("\n", "<br>")


_MARKDOWN_ENTITIES = str.maketrans({c: f"&#{ord(c)};" for c in "\\`*_{}[]()#+-.!|~$"})
