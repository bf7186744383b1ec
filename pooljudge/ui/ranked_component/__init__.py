"""The Review page's ranked list of one query as one element that handles its keys in the browser.

A ``st.components.v2`` component (plain JavaScript in ``frontend/``, no build step, in the page's own DOM) is
sent the query's pooled passages with their labels.  J/K, 0-3, X and U move the cursor and set labels in the
browser, without a round trip to the server per key; "Apply" sends the labels set and their reason as the
component's state, and :func:`apply_changes` (its change callback) stores them through
:func:`db.adjudication.override_labels`, only for the pairs of the list this session was sent.

Untrusted text travels as ``[text, marked]`` segments that the browser draws with ``textContent``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import add_script_run_ctx, get_script_run_ctx

import db.ranked_lists as ranked_reads
from core.scale import GRADES
from core.validators import is_integer
from db.pools import pool_names
from db.ranked_lists import RankedEntry, RankedList
from pooljudge.ui.annotate_component import segments
from pooljudge.ui.background import background
from pooljudge.ui.keys import EXCLUDE_KEY, NEXT_KEY, PREVIOUS_KEY, UNDO_KEY
from pooljudge.ui.packaged_components import packaged_component

FRONTEND = Path(__file__).resolve().parent / "frontend"
KEY = "ranked_list"  # the component's key: its state ("apply") is in st.session_state[KEY]
SHOWN = "ranked_list_shown"  # {list id: the (query row id, passage row id) pairs sent}: what an apply may change
OUTCOME = "ranked_list_outcome"  # {"serial", "status", "message"} of the last apply, for the browser


_log = logging.getLogger(__name__)
_prefetched: set[tuple[str, str, str | None]] = set()
_prefetch_lock = threading.Lock()


@st.cache_data(max_entries=16, show_spinner=False)
def queries_of_pool(_store, url: str, collection: str, pool: str, version: int) -> list[tuple[str, str, int]]:
    """:func:`db.ranked_lists.pool_queries` of the store at ``url``, read once per pool (``version``): it groups
    every entry of the pool, and a saved pool never changes (``_store`` is not part of the key)."""
    with _store.read() as session:
        return ranked_reads.pool_queries(session, collection, pool)


def prefetch(store, collection: str, pool: str | None, language: str | None) -> None:
    """Read what the Ranked list tab reads first, in a thread of its own, once per pool and server process.

    The first visit of the tab otherwise reads the pool's queries (about 30 ms on 2,000 queries and an idle
    machine) and runs its statements for the first time (SQLAlchemy compiles each once per engine): 300-400 ms
    of the tab's first switch on a busy machine.  The Review page calls this after drawing another tab, so the
    reads happen while the reviewer looks at that one.  ``pool``: the one the tab shows (None: the first);
    ``language``: the collection's.  Only in the app: the app tests count the reads a tab makes (their
    background worker is a thread).
    """
    if not background().in_processes:
        return
    key = (store.url, collection, pool)
    with _prefetch_lock:
        if key in _prefetched:
            return
        _prefetched.add(key)
    thread = threading.Thread(
        target=_prefetch, args=(store, collection, pool, language), name="pooljudge-ranked-prefetch", daemon=True
    )
    add_script_run_ctx(thread, get_script_run_ctx())  # st.cache_data, from this thread
    thread.start()


def _prefetch(store, collection: str, pool: str | None, language: str | None) -> None:
    try:
        with store.read() as session:
            pools = pool_names(session, collection, selected=True)
            name = pool if pool in pools else (pools[0] if pools else None)
            if name is None:
                return
            version = ranked_reads.pool_version(session, collection, name)
        queries = queries_of_pool(store, store.url, collection, name, version)
        if queries:
            with store.read() as session:  # its statements, compiled for the tab's first run
                first = ranked_reads.ranked_list(session, collection, name, queries[0][0], run=None)
            segments(first.query, first.query, language)  # the highlighter's analyzer, built once per language
        _component()  # registered once per process (Streamlit reads the package's manifest)
    except Exception:  # noqa: BLE001 - a read ahead that fails leaves the work to the tab, which reports it
        _log.info("the ranked list's read ahead failed", exc_info=True)


def _component() -> Callable[..., Any]:
    return packaged_component("ranked_list")


def list_id(pool: str, qid: str, order: str | None) -> str:
    """What names one list: a new one starts with the cursor on top and nothing set."""
    return f"{pool}\x1f{qid}\x1f{order or ''}"


def entry_payload(
    e: RankedEntry, query: str, order: str | None, language: str | None, *, final: str, labels: str
) -> dict[str, Any]:
    """One passage of the list for the browser: where it ranks, its texts as segments, its labels in words
    (``final``: its final label; ``labels``: every annotator's)."""
    where = f"#{e.position}" + (
        "" if order is None else (f" · rank {e.run_rank}" if e.run_rank else " · not retrieved")
    )
    return {
        "id": f"{e.query_id}:{e.passage_id}",
        "query_id": e.query_id,
        "passage_id": e.passage_id,
        "position": e.position,
        "where": where,
        "docid": e.docid,
        "title": segments(query, e.title, language) if e.title else [],
        "passage": segments(query, e.passage, language) if e.passage else [],
        "final": final,
        "labels": labels,
    }


def parse_apply(raw: Any, allowed: set[tuple[int, int]]) -> tuple[int, list[tuple[int, int, int | None]], str]:
    """``(serial, changes, reason)`` of the browser's apply message, or ValueError naming what is wrong.

    A change must name a pair of the list this session was sent (``allowed``) and a grade of the scale or
    ``None`` (exclude); a pair may appear once.
    """
    if not isinstance(raw, dict) or not is_integer(raw.get("serial")):
        raise ValueError("the message has no serial")
    changes_raw, reason = raw.get("changes"), raw.get("reason")
    if not isinstance(changes_raw, list) or not isinstance(reason, str):
        raise ValueError("the message has no list of changes and reason")
    changes: list[tuple[int, int, int | None]] = []
    for item in changes_raw:
        if not (isinstance(item, list) and len(item) == 3 and is_integer(item[0]) and is_integer(item[1])):
            raise ValueError(f"a change is not [query, passage, grade]: {item!r:.80}")
        grade = item[2]
        if grade is not None and (not is_integer(grade) or grade not in GRADES):
            raise ValueError(f"a grade is not one of {', '.join(map(str, GRADES))} or exclude: {grade!r:.20}")
        pair = (int(item[0]), int(item[1]))
        if pair not in allowed:
            raise ValueError("a change names a pair that is not in the list shown")
        if any(pair == (q, p) for q, p, _g in changes):
            raise ValueError("a pair is set twice")
        changes.append((*pair, None if grade is None else int(grade)))
    return int(raw["serial"]), changes, reason


def apply_changes(store_changes: Callable[[list[tuple[int, int, int | None]], str], str | None]) -> None:
    """The component's change callback: check the apply message and store it with ``store_changes(changes,
    reason)``, which returns a refusal (plain text) or None; the outcome goes back to the browser."""
    state = st.session_state
    raw = (state.get(KEY) or {}).get("apply")
    serial = raw.get("serial") if isinstance(raw, dict) and is_integer(raw.get("serial")) else 0
    shown = state.get(SHOWN, {}).get(raw.get("list") if isinstance(raw, dict) else None)
    try:
        if shown is None:
            raise ValueError("this list is no longer shown: open it again")
        serial, changes, reason = parse_apply(raw, shown)
        if not changes:
            raise ValueError("no label was set: choose a final label for at least one passage")
    except ValueError as exc:
        state[OUTCOME] = {"serial": serial, "status": "refused", "message": f"Nothing was stored: {exc}."}
        return
    refusal = store_changes(changes, reason)
    state[OUTCOME] = (
        {"serial": serial, "status": "refused", "message": f"Nothing was stored: {refusal.rstrip('.')}."}
        if refusal
        else {"serial": serial, "status": "stored", "message": ""}
    )


def show_ranked_list(
    ranked: RankedList,
    *,
    pool: str,
    order: str | None,
    entries: Sequence[dict[str, Any]],
    store_changes: Callable[[list[tuple[int, int, int | None]], str], str | None],
) -> None:
    """Mount the list of ``ranked`` (``entries``: :func:`entry_payload` of each, with its labels in words)."""
    name = list_id(pool, ranked.qid, order)
    st.session_state[SHOWN] = {name: {(e.query_id, e.passage_id) for e in ranked.entries}}
    data = {
        "list": name,
        "entries": list(entries),
        "grades": list(GRADES),
        "keys": {
            "next": NEXT_KEY.lower(),
            "previous": PREVIOUS_KEY.lower(),
            "exclude": EXCLUDE_KEY.lower(),
            "undo": UNDO_KEY.lower(),
        },
        "outcome": st.session_state.get(OUTCOME, {}),
    }
    _component()(key=KEY, data=data, default={"apply": None}, on_apply_change=lambda: apply_changes(store_changes))
