"""The Annotate page's item view as a queue held in the browser (Prodigy's task queue is the model).

A ``st.components.v2`` component (plain JavaScript in ``frontend/``, no build step, mounted in the page's own
DOM rather than an iframe) is sent the next few items of the annotator's queue, each with a render token
issued here.  A key press answers the item on screen and shows the next one at once; the answers go back
as the component's state, in the background, and :func:`process_answers` (its change callback) stores each
through :func:`db.queue.store_answer`: the account, the owner, the package, any standing label and the
token are checked per answer, a resend stores nothing twice, and the outcome per token goes back to the
browser, which shows a refusal with the item it concerns.

Untrusted text travels as ``[text, marked]`` segments that the browser draws with ``textContent``.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import streamlit as st
from bm25s.stopwords import STOPWORDS_CHINESE

from core.text import analyzer_for, highlight_spans
from core.validators import is_integer
from db.access import Forbidden, SignedOut
from db.labelling import Item, next_items
from db.queue import parse_answers, store_answer
from pooljudge.ui.auth import note_refused
from pooljudge.ui.common import md_escape
from pooljudge.ui.packaged_components import packaged_component

FRONTEND = Path(__file__).resolve().parent / "frontend"
KEY = "annotate_queue"  # the component's key: its state ("answers") is in st.session_state[KEY]
# the item on screen and the next twenty-nine: a burst of keys does not run the queue dry while a busy server
# takes seconds to store the answers and send more
AHEAD = 30
ISSUED = "annotate_queue_issued"  # {render token: assignment id} of every item sent to this browser session
TOKENS = "annotate_queue_tokens"  # {assignment id: its token now}: an item served again after its token was used gets a new one
OUTCOMES = "annotate_queue_outcomes"  # {token: {"status", "reason"}} of the last message's answers
COMMAND_DONE = "annotate_queue_command"  # serial of the last command (undo, previous) carried out
SESSION = "annotate_queue_session"  # a new value makes the browser start an empty queue
DESCRIBED = "annotate_queue_described"  # {token: the item in words} for the refusals of a signed-out account
TEXTS = "annotate_queue_texts"  # {assignment id: its texts as segments}
ERROR = "annotate_queue_error"  # a message the callback keeps for the panel's next run
_NOT_HIGHLIGHTED = frozenset(STOPWORDS_CHINESE)


def _component() -> Callable[..., Any]:
    return packaged_component("annotate_queue")


def segments(query: str | None, text: str, language: str | None) -> list[list[Any]]:
    """``text`` as ``[[piece, marked], ...]``: the pieces in order, query-term matches marked (as the highlighter)."""
    analyzer = analyzer_for(language if language in ("en", "zh", "mixed") else "mixed")
    spans = highlight_spans(query, text, analyzer, ignore=_NOT_HIGHLIGHTED) if query and text else []
    out: list[list[Any]] = []
    at = 0
    for start, end in spans:
        if start > at:
            out.append([text[at:start], False])
        out.append([text[start:end], True])
        at = end
    if at < len(text):
        out.append([text[at:], False])
    return out


def _kind(item: Item) -> str:
    return "Adjudication" if item.purpose == "fourth" else ("Quality review" if item.purpose == "qc" else "Package")


def _describe(item: Item) -> str:
    """The item in words, for a refusal: its place in its package (the passage itself is not repeated)."""
    return f"Item {item.position} of {item.package}"


def _texts(item: Item) -> dict[str, Any]:
    """The item's texts as segments, computed once per item and session (a rerun re-sends the whole queue)."""
    cache = st.session_state.setdefault(TEXTS, {})
    if item.assignment_id not in cache:
        if len(cache) >= 4 * AHEAD:
            cache.pop(next(iter(cache)))  # the oldest: long gone from the queue
        cache[item.assignment_id] = {
            "query": segments(None, item.query, item.query_language),
            "title": segments(item.query, item.title, item.passage_language) if item.title else [],
            "passage": segments(item.query, item.passage, item.passage_language),
        }
    return cache[item.assignment_id]


def _payload(item: Item, token: str) -> dict[str, Any]:
    return {
        **_texts(item),
        "assignment_id": item.assignment_id,
        "token": token,
        "scale": item.scale,
        # the progress line, which the browser draws with the labels given there and not yet acknowledged
        "kind": _kind(item),
        "package": item.package,
        "position": item.position,
        "done": item.done,
        "total": item.total,
        "describe": _describe(item),
        # a QC item whose label the annotator kept after rework: that label and the annotator's note
        "note": getattr(item, "note", ""),
    }


def _token_for(assignment_id: int) -> str:
    state = st.session_state
    tokens, issued = state.setdefault(TOKENS, {}), state.setdefault(ISSUED, {})
    token = tokens.get(assignment_id)
    if token is None:
        token = tokens[assignment_id] = secrets.token_hex(16)
        issued[token] = assignment_id
    return token


def upcoming(store, user_id: int) -> list[tuple[Item, str]]:
    """The next :data:`AHEAD` items of the account's queue with their render tokens (issued here, kept per item)."""
    with store.read() as session:
        items = next_items(session, user_id, AHEAD)
    described = st.session_state.setdefault(DESCRIBED, {})
    out = [(item, _token_for(item.assignment_id)) for item in items]
    described.update({token: _describe(item) for item, token in out})
    return out


def _store_all(store, user_id: int, raw: Any) -> tuple[dict[str, dict[str, str]], list[str]]:
    """Store each answer in a savepoint of its own; ``({token: outcome}, refusals of a signed-out account)``.

    One write transaction per message: a busy store (an import, other labellers) makes each write wait its
    turn for the lock, once per message rather than once per answer.
    """
    state = st.session_state
    issued: Mapping[str, int] = state.setdefault(ISSUED, {})
    tokens = state.setdefault(TOKENS, {})
    outcomes: dict[str, dict[str, str]] = {}
    signed_out: list[str] = []
    answers = parse_answers(raw)
    if not answers:
        return outcomes, signed_out
    with store.write() as session:
        for answer in answers:
            try:
                with session.begin_nested():  # a refusal raises before any write: back to the savepoint
                    store_answer(session, user_id, answer, issued)
            except SignedOut as exc:
                outcomes[answer.token] = {"status": "refused", "reason": str(exc)}
                signed_out.append(f"{state.get(DESCRIBED, {}).get(answer.token, 'an item')}: {exc}")
            except (Forbidden, ValueError) as exc:
                outcomes[answer.token] = {"status": "refused", "reason": str(exc)}
            else:
                outcomes[answer.token] = {"status": "stored", "reason": ""}
    for answer in answers:
        if tokens.get(answer.assignment_id) == answer.token:
            del tokens[answer.assignment_id]  # used: the item, served again (a skip, an undo), gets a new token
    return outcomes, signed_out


def process_answers(store, user_id: int, on_command: Callable[[str, int | None], None]) -> None:
    """The component's change callback: store the browser's pending answers, then run its command, if any."""
    state = st.session_state
    value = (state.get(KEY) or {}).get("answers") or {}
    try:
        outcomes, signed_out = _store_all(store, user_id, value.get("answers", []))
    except ValueError as exc:  # a malformed message: parsed before anything was stored
        state[OUTCOMES] = {}
        state[ERROR] = f"The answers sent were not understood, nothing was stored: {exc}"
        return
    state[OUTCOMES] = outcomes
    # a signed-out account's page goes to the login screen at once: its notice says what was not stored
    note_refused("  \nNot stored: " + md_escape("; ".join(signed_out)) if signed_out else None)
    command = value.get("command")
    if isinstance(command, dict) and is_integer(command.get("serial")):
        if command["serial"] > state.get(COMMAND_DONE, 0):
            state[COMMAND_DONE] = command["serial"]
            shown: Any = command.get("shown")
            on_command(str(command.get("name")), int(shown) if is_integer(shown) else None)


def show_queue(
    store,
    user_id: int,
    items: Sequence[tuple[Item, str]],
    levels: Mapping[str, Sequence[Mapping[str, Any]]],
    keys: Mapping[str, Mapping[int, str]],
    on_command: Callable[[str, int | None], None],
) -> None:
    """Mount the queue with ``items`` (:func:`upcoming`: the account's next items and their tokens).

    ``levels``: the guide's levels per scale (grade, name, definition); ``keys``: the key of each grade per
    scale; ``on_command(name, shown)``: runs the browser's ``"undo"`` or ``"previous"`` (``shown``: the
    assignment id on screen then) after the answers sent with it are stored.
    """
    error = st.session_state.pop(ERROR, None)
    if error:
        st.error(md_escape(error))
    data = {
        "session": st.session_state.setdefault(SESSION, secrets.token_hex(8)),
        "items": [_payload(item, token) for item, token in items],
        "outcomes": st.session_state.get(OUTCOMES, {}),
        "command_done": st.session_state.get(COMMAND_DONE, 0),
        "levels": {
            scale: [
                {
                    "grade": lv["grade"],
                    "name": lv["name"],
                    "definition": lv["definition"],
                    "key": keys[scale][lv["grade"]],
                }
                for lv in scale_levels
            ]
            for scale, scale_levels in levels.items()
        },
        "more": bool(items),
    }
    _component()(
        key=KEY,
        data=data,
        default={"answers": None},
        on_answers_change=lambda: process_answers(store, user_id, on_command),
    )
