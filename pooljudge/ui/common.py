"""Cached heavy objects and safe rendering helpers for the Streamlit pages."""

from __future__ import annotations

import re

import streamlit as st

from db.engine import Store
from pooljudge.seed import ensure_demo

LIVE = "live final labels"
"""The qrels source that is the current final labels rather than a frozen version."""

# Every ASCII punctuation character (CommonMark lets a backslash escape each of them): emphasis, links,
# HTML, "$" math, Streamlit's :red[x] colour directives and :material/icon: names.  Escaping ":" also
# keeps Streamlit from loading its emoji plugin, which it does only when the source holds ":word:" (an
# escaped "\:smile\:" never does).
_MARKDOWN_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")
# GFM autolinks of www.x.org, https://x and a@b.org survive backslash escapes: remark-gfm finds them again
# in the parsed text.  A WORD JOINER (U+2060, invisible, no line break) after "www", between ":" and "//"
# and before "@" breaks those patterns; only these labels carry it, the stored text never does.
_AUTOLINK_SEAMS = re.compile(r"(?<=www)(?=\\\.)|(?<=\\:)(?=\\/\\/)|(?=\\@)", re.IGNORECASE)
WORD_JOINER = "\u2060"


@st.cache_resource(show_spinner="Opening the store...")
def get_store() -> Store:
    """The process-wide store; the demo collection is loaded into an empty store the first time."""
    store = Store()
    ensure_demo(store)
    return store


def collections_or_stop(store: Store) -> list:
    """The store's collections (:class:`db.queries.CollectionInfo`); on an empty store the page says so and stops."""
    from db.queries import list_collections

    with store.read() as session:
        collections = list_collections(session)
    if not collections:
        st.info("No collections yet: import one first.")
        st.stop()
    return collections


def qrels_source_box(container, store: Store, info, *, key: str | None = None) -> str:
    """A selectbox of the collection's qrels sources: :data:`LIVE`, then its frozen versions, newest first.

    The live labels are the default, unless nobody has labelled yet: then the
    newest version, which has something to show.
    """
    from db.review import activity_marker

    with store.read() as session:
        anyone_labelled = activity_marker(session, info.name)[0] > 0  # the id of the last judgment, 0 for none
    return container.selectbox("Qrels", [LIVE, *info.qrels_versions[::-1]], key=key,
                               index=0 if anyone_labelled or not info.qrels_versions else 1,
                               help="Live final labels update as annotators label; versions are frozen snapshots.")


def load_qrels_source(session, collection: str, source: str) -> dict:
    """The qrels of a source offered by :func:`qrels_source_box`."""
    from db.annotation import live_qrels
    from db.queries import load_qrels

    return live_qrels(session, collection) if source == LIVE else load_qrels(session, collection, source)


@st.cache_resource(show_spinner="Loading the run...", max_entries=32)
def shared_run(store_url: str, collection: str, run: str):
    """A stored run, one copy for every session and rerun of this process.  Callers must not mutate it.

    A stored run never changes (a name is never reused), so sharing it is safe; a
    ``cache_data`` copy would be unpickled on every rerun (0.3 s per million entries).
    """
    from db.queries import load_run

    with get_store().read() as session:
        return load_run(session, collection, run)


def md_escape(text: str) -> str:
    """Escape untrusted text for Markdown-only places so it renders literally (no links, HTML, emoji or formatting).

    For labels that can only be Markdown (expander titles, button, tab and
    radio-option labels, ``st.caption``/``st.error`` messages).  Invisible
    word joiners break URLs and e-mail addresses apart for the Markdown
    renderer, and runs of spaces and line breaks still follow
    Markdown, so passages and other long text go through
    :func:`pooljudge.ui.highlight.show_text` instead, which shows them
    exactly.
    """
    return _AUTOLINK_SEAMS.sub(WORD_JOINER, _MARKDOWN_SPECIAL.sub(r"\\\1", text))


def fmt_float(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"
