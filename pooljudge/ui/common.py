"""Cached heavy objects and safe rendering helpers for the Streamlit pages."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

import pandas as pd
import streamlit as st

from db.engine import Store
from db.opening import open_store
from pooljudge.seed import ensure_demo
from pooljudge.ui.script_control import stop_run

COLLECTION_STATE = "pooljudge_collection"
"""Session state: the collection this browser session works on; every page's collection box starts there."""
COLLECTION_PARAM = "collection"
"""The URL query parameter that mirrors :data:`COLLECTION_STATE`, so a link or a reload opens the same collection."""
_URL_SEEN = "pooljudge_collection_url_seen"  # the URL's collection at the previous run: a new one is a link followed
VERSION_STATE = "pooljudge_qrels_version"
"""Session state: ``{collection: qrels version}`` picked last on the Dataset statistics page, also used by Home."""
MISSING = "\u2013"
"""What a table shows for a missing value (an en dash), instead of Streamlit's "None"."""

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
    store = open_store()
    ensure_demo(store)
    return store


def collections_or_stop(store: Store) -> list:
    """The store's collections (:class:`db.queries.CollectionInfo`); on an empty store the page says so and stops."""
    from db.queries import list_collections

    with store.read() as session:
        collections = list_collections(session)
    if not collections:
        st.info("No collections yet: import one first.")
        stop_run()
    return collections


def qrels_source_box(container, store: Store, info, *, key: str | None = None) -> str:
    """A selectbox of the collection's qrels sources: :data:`LIVE`, then its frozen versions, newest first.

    The live labels are the default, unless nobody has labelled yet: then the
    newest version, which has something to show.
    """
    from db.review import anyone_labelled

    with store.read() as session:
        labelled = anyone_labelled(session, info.name)
    return container.selectbox(
        "Qrels",
        [LIVE, *info.qrels_versions[::-1]],
        key=key,
        index=0 if labelled or not info.qrels_versions else 1,
        help="Live final labels update as annotators label; versions are frozen snapshots.",
    )


def load_qrels_source(session, collection: str, source: str) -> dict:
    """The qrels of a source offered by :func:`qrels_source_box`."""
    from db.queries import stored_qrels
    from db.resolution import live_qrels

    return live_qrels(session, collection) if source == LIVE else stored_qrels(session, collection, source)


@st.cache_resource(show_spinner="Loading the run...", max_entries=32)
def shared_run(store_url: str, collection: str, run: str):
    """A stored run, one copy for every session and rerun of this process.  Callers must not mutate it.

    A stored run never changes (a name is never reused), so sharing it is safe; a
    ``cache_data`` copy would be unpickled on every rerun (0.3 s per million entries).
    """
    from db.queries import stored_run

    with get_store().read() as session:
        return stored_run(session, collection, run)


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


_FLASH = "pj_flash::"
"""Session-state key prefix of the messages :func:`flash` keeps for :func:`show_flash`."""


def flash(message: str, kind: str = "success", *, where: str = "page", user_id: int | None = None) -> None:
    """Keep ``message`` to be shown by the next :func:`show_flash` of slot ``where``, e.g. after a rerun.

    The one way pages report what an action did: a callback or a button
    stores the outcome, then the page's next run shows it where it belongs
    (above a table the action changed, beside a form...).

    Parameters
    ----------
    message
        Markdown: escape untrusted parts with :func:`md_escape`.
    kind
        ``"success"``, ``"info"``, ``"warning"`` or ``"error"``: the Streamlit element that shows it.
    where
        The slot; each page names its own (``"errors_pair"``), so two messages of a page do not clash.
    user_id
        When set, only a :func:`show_flash` for this account shows it: a message for an account signed out in
        this browser session since is dropped.
    """
    if kind not in ("success", "info", "warning", "error"):
        raise ValueError(f"kind must be success, info, warning or error, got {kind!r}")
    st.session_state[_FLASH + where] = (kind, message, user_id)


def show_flash(where: str = "page", container=None, *, user_id: int | None = None) -> str | None:
    """Show (once) the message :func:`flash` kept for slot ``where``, in ``container`` (default: a slot here).

    The default slot (``st.empty()``) is drawn in every run, message or not, so what follows keeps its place:
    until a run's element arrives the browser shows the earlier run's element at that place (and a block its
    children), and a page that moved up by one when a message went showed a text twice, or one item's texts in
    another's box, while the run lasted.

    Returns the message shown, or None.
    """
    slot = container if container is not None else st.empty()
    kept = st.session_state.pop(_FLASH + where, None)
    if kept is None or (kept[2] is not None and kept[2] != user_id):
        return None
    kind, message, _ = kept
    getattr(slot, kind)(message)
    return message


def show_rows(rows: Sequence[object], container=None, **options) -> None:
    """Rows (dicts or dataclasses, one per line) as a full-width table without pandas' index.

    ``container`` defaults to ``st``; ``options`` (``column_config``, ``key``...) go to ``st.dataframe``.
    """
    (container if container is not None else st).dataframe(
        pd.DataFrame(rows), hide_index=True, width="stretch", **options
    )


def download_button(label: str, data, **options) -> None:
    """``st.download_button`` that does not rerun the page when clicked: a download needs no rerun, and for a
    deferred file (``data`` a function) the browser asks for the file after the click's rerun has started,
    which registers the function under a new id and drops the one asked for (no file came, on a loaded machine)."""
    st.download_button(label, data, on_click="ignore", **options)


def fmt_float(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _archived_link_notice(container, wanted: str, chosen: str) -> None:
    """An info line when the URL names an archived collection (the box shows ``chosen`` instead)."""
    from db.archive_state import archived_collection

    with get_store().read() as session:
        archived = archived_collection(session, wanted)
    if archived is not None:
        by, at = archived
        container.info(
            md_escape(
                f"Collection {wanted!r} (from the link) is archived (by {by or 'unknown'} at {at:%Y-%m-%d %H:%M} "
                f"UTC): this page shows {chosen!r}. Restore it on the Manage page to work on it here; "
                f"`pooljudge eval -c` and `export -c` still read it by name."
            )
        )


def collection_box(
    container, collections: Sequence, *, key: str, label: str = "Collection", format_func: Callable | None = None
):
    """A selectbox of the collections that starts at the one this session worked on last; returns its ``CollectionInfo``.

    The choice follows the user from page to page (:data:`COLLECTION_STATE`)
    and is mirrored in the URL (``?collection=name``), so that a reload or a
    shared link opens the same collection.  On a page's first run the URL's
    collection wins (a link was followed), then the session's, then the first
    one; an archived or no longer existing collection falls back to the first.

    Parameters
    ----------
    container
        Where the box goes (``st``, a column, a form...).
    collections
        The :class:`db.queries.CollectionInfo` to offer, in order.
    key
        The widget key of this page's box (each box needs its own: Streamlit drops a widget's state when a
        page without it runs, which is why the shared choice is kept under another key).
    format_func
        Label of an option from its ``CollectionInfo`` (default: the name).
    """
    shown = [c for c in collections if getattr(c, "archived_at", None) is None] or list(collections)
    by_name = {c.name: c for c in shown}
    names = list(by_name)
    state = st.session_state
    if key in state and state[key] not in by_name:  # archived or gone since the last run
        del state[key]
    if key in state:
        chosen = state[key]
    else:
        wanted = st.query_params.get(COLLECTION_PARAM)
        chosen = next((n for n in (wanted, state.get(COLLECTION_STATE)) if n in by_name), names[0])
        state[COLLECTION_STATE] = chosen
        if wanted and wanted not in by_name:  # a link to an archived collection: say so, not a silent switch
            _archived_link_notice(container, wanted, str(chosen))

    def remember() -> None:  # only a choice the user makes moves the shared one (a page may hold two boxes)
        # .get: Log out clears the session while the page's timers may still send the box's value, whose
        # callback then runs without the key (a KeyError there kept the login screen from showing)
        chosen_now = st.session_state.get(key)
        if chosen_now is not None:
            st.session_state[COLLECTION_STATE] = chosen_now

    name = container.selectbox(
        label,
        names,
        index=names.index(chosen),
        key=key,
        on_change=remember,
        format_func=lambda n: format_func(by_name[n]) if format_func else n,
    )
    current = state.get(COLLECTION_STATE, name)
    if st.query_params.get(COLLECTION_PARAM) != current:
        st.query_params[COLLECTION_PARAM] = current
    state[_URL_SEEN] = current  # written here, not followed: carry_collection must not take it for a link
    return by_name[name]


def carry_collection(store: Store) -> None:
    """Carry the collection choice through every page, those without a collection box included.

    Called by ``app.py`` before each page runs: a ``?collection=`` the session has not seen yet (a link
    followed) becomes the session's choice when that collection exists, and the session's choice is
    written back to the URL, which the sidebar's page links drop, so a reload of any page keeps it.
    A choice made in a box since (its callback moved :data:`COLLECTION_STATE`) wins over the URL it
    has not rewritten yet.
    """
    state = st.session_state
    url = st.query_params.get(COLLECTION_PARAM)
    if url and url != state.get(_URL_SEEN) and url != state.get(COLLECTION_STATE):
        from db.queries import list_collections

        with store.read() as session:
            if any(c.name == url for c in list_collections(session)):
                state[COLLECTION_STATE] = url
    current = state.get(COLLECTION_STATE)
    if current is not None and url != current:
        st.query_params[COLLECTION_PARAM] = current
    state[_URL_SEEN] = current or url


def describe_version(summary, *, markdown: bool = False) -> str:
    """``name (imported, 4,102 judgments)``: a qrels version with where it came from and its size.

    With ``markdown``, for captions and other Markdown: the name, untrusted text, escaped.
    """
    origin = {"import": "imported", "frozen": "frozen final labels"}.get(summary.source, summary.source)
    return f"{md_escape(summary.name) if markdown else summary.name} ({origin}, {summary.judgments:,} judgment{'' if summary.judgments == 1 else 's'})"


def default_version(summaries: dict, remembered: str | None = None) -> str | None:
    """The qrels version a page shows unless told otherwise; None when the collection has none.

    A stable choice, so that a freeze never silently replaces the numbers
    shown: the version this session picked last for the collection, else the
    newest imported version (the reference judgments a collection came with),
    else the newest version.  ``summaries`` is :func:`db.version_summary.version_summaries`'s
    answer (oldest first).
    """
    if remembered in summaries:
        return remembered
    imported = [name for name, s in summaries.items() if s.source == "import"]
    newest = imported or list(summaries)
    return newest[-1] if newest else None


@st.cache_data(show_spinner=False, max_entries=256)
def _summaries(store_url: str, collection: str, versions: tuple[str, ...]) -> dict:
    # keyed by the version names: a freeze, an import or an archived version changes them
    from db.version_summary import version_summaries

    with get_store().read() as session:
        return version_summaries(session, collection)


def qrels_summaries(store: Store, info) -> dict:
    """The collection's offered qrels versions (``info.qrels_versions``) as :class:`db.version_summary.VersionSummary`."""
    found = _summaries(store.url, info.name, tuple(info.qrels_versions))
    return {name: found[name] for name in info.qrels_versions if name in found}


def chosen_version(store: Store, info) -> str | None:
    """The version :func:`qrels_version_box` would start at, for pages that show it without a picker (Home)."""
    return default_version(qrels_summaries(store, info), st.session_state.get(VERSION_STATE, {}).get(info.name))


def qrels_version_box(container, store: Store, info, *, key: str) -> str | None:
    """A selectbox of the collection's frozen qrels versions, newest first, starting at :func:`default_version`.

    The pick is remembered per collection for the session (Home shows the
    same version).  Returns the version's name, or None (and shows nothing)
    when the collection has no qrels version.
    """
    summaries = qrels_summaries(store, info)
    if not summaries:
        return None
    options = list(summaries)[::-1]
    remembered = st.session_state.setdefault(VERSION_STATE, {})
    widget = f"{key}::{info.name}"  # one per collection: switching collections starts at that one's choice
    if widget in st.session_state and st.session_state[widget] not in summaries:
        del st.session_state[widget]
    start = default_version(summaries, remembered.get(info.name))
    version = container.selectbox(
        "Qrels version",
        options,
        index=options.index(start),
        key=widget,
        format_func=lambda name: describe_version(summaries[name]),
        help="Every judgment count on this page comes from this version. It starts at the "
        "version picked last, else the newest imported one, else the newest.",
    )
    remembered[info.name] = version
    return version


def blank_missing(frame: pd.DataFrame, formats: dict[str, str] | None = None) -> pd.DataFrame:
    """The table with each missing value shown as :data:`MISSING` instead of Streamlit's "None".

    Only the columns that hold a missing value change, into text; the others
    keep their type (and their sorting and number formats).  A changed
    column's numbers are written with its format spec in ``formats`` (e.g.
    ``{"score": ".4f"}``, as its ``column_config`` would have shown them),
    else with ``str``.
    """
    out = frame.copy()
    for column in frame.columns:
        values = frame[column]
        if values.isna().any():
            spec = (formats or {}).get(column)
            out[column] = [MISSING if _missing(v) else (format(v, spec) if spec else str(v)) for v in values]
    return out


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA or value is pd.NaT
