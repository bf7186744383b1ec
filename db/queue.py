"""The browser's queue of items (the Annotate page's component): what it is sent, and how its answers are stored.

The page sends the next few items of the annotator's queue, each with a render token it issued, and the
browser answers them in the background, several at a time.  Every answer goes through
:func:`db.labelling.record_judgment` with its assignment id and token, so the guarantees of one key press per
request hold for a batch: the account, the owner, the package and any standing label are checked in the
write; a token the page never issued for that item is refused; the same ``(assignment, token)`` sent twice
(a resend after a rerun) is stored once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.validators import is_integer
from db.access import Forbidden
from db.labelling import record_judgment
from db.models import Judgment
from db.vocab import JudgmentAction

ACTIONS = (JudgmentAction.LABEL, JudgmentAction.SKIP, JudgmentAction.FLAG)
MAX_BATCH = 200  # answers in one message from the browser; more is no queue of a few items
MAX_NOTE = 2000


class StaleToken(Forbidden):
    """The answer names a render token this page never issued for that item: nothing was stored."""


@dataclass(frozen=True)
class Answer:
    """One key press of the browser's queue: what was answered on which item, as it was shown."""

    assignment_id: int
    token: str
    action: str
    grade: int | None
    note: str = ""
    elapsed_ms: int | None = None


def parse_answers(raw: Any) -> list[Answer]:
    """The answers of one message from the browser, checked field by field (``ValueError`` names the bad one).

    Parameters
    ----------
    raw : list of dict
        ``[{"assignment_id": int, "token": str, "action": "label" | "skip" | "flag", "grade": int | None,
        "note": str, "elapsed_ms": int}, ...]`` as the component sends it.

    Returns
    -------
    list of Answer
        In the order they were given (the order of the key presses).
    """
    if not isinstance(raw, list):
        raise ValueError(f"answers must be a list, got {type(raw).__name__}")
    if len(raw) > MAX_BATCH:
        raise ValueError(f"at most {MAX_BATCH} answers at once, got {len(raw)}")
    return [_answer(i, entry) for i, entry in enumerate(raw, start=1)]


def _answer(i: int, entry: Any) -> Answer:
    if not isinstance(entry, dict):
        raise ValueError(f"answer {i}: expected an object, got {type(entry).__name__}")
    aid, token, action = entry.get("assignment_id"), entry.get("token"), entry.get("action")
    grade, note, elapsed = entry.get("grade"), entry.get("note", ""), entry.get("elapsed_ms")
    if not is_integer(aid):
        raise ValueError(f"answer {i}: assignment_id must be an integer, got {aid!r}")
    if not isinstance(token, str) or not 0 < len(token) <= 64:
        raise ValueError(f"answer {i}: token must be a string of 1 to 64 characters")
    if action not in ACTIONS:
        raise ValueError(f"answer {i}: action must be one of {', '.join(ACTIONS)}, got {action!r}")
    if grade is not None and not is_integer(grade):
        raise ValueError(f"answer {i}: grade must be an integer or null, got {grade!r}")
    if not isinstance(note, str) or len(note) > MAX_NOTE:
        raise ValueError(f"answer {i}: note must be a string of at most {MAX_NOTE} characters")
    if elapsed is not None and (not is_integer(elapsed) or elapsed < 0):
        raise ValueError(f"answer {i}: elapsed_ms must be a non-negative integer, got {elapsed!r}")
    return Answer(
        int(aid),  # type: ignore[arg-type]  # is_integer checked it above
        token,
        action,
        None if grade is None else int(grade),
        note,
        None if elapsed is None else int(elapsed),
    )


def already_stored(session: Session, user_id: int, answer: Answer) -> bool:
    """Whether this very answer (its assignment and token) is in the user's log already."""
    return (
        session.scalar(
            select(Judgment.id).where(
                Judgment.assignment_id == answer.assignment_id,
                Judgment.user_id == user_id,
                Judgment.submission_token == answer.token,
            )
        )
        is not None
    )


def store_answer(session: Session, user_id: int, answer: Answer, issued: Mapping[str, int]) -> bool:
    """Store one answer of the browser's queue in the caller's write transaction; False when it was stored before.

    Parameters
    ----------
    session : Session
        A write transaction; a refusal raises before anything is written, so the caller's rollback leaves
        the store as it was.
    user_id : int
        The acting account (checked active, owner and role by :func:`db.labelling.record_judgment`).
    answer : Answer
        What the browser sent for one item.
    issued : Mapping[str, int]
        ``{render token: assignment id}`` of the items this page sent to the browser.

    Raises
    ------
    StaleToken
        The token was not issued by this page for this assignment.
    Forbidden, ValueError
        As :func:`db.labelling.record_judgment` (signed out, not the user's item, item no longer open or
        already labelled, grade off the scale).
    """
    if issued.get(answer.token) != answer.assignment_id:
        raise StaleToken("Not stored: this page did not show that item (an old or made-up token).")
    if already_stored(session, user_id, answer):
        return False
    record_judgment(
        session,
        user_id,
        answer.assignment_id,
        answer.grade if answer.action == JudgmentAction.LABEL else None,
        action=answer.action,
        note=answer.note if answer.action == JudgmentAction.FLAG else "",
        elapsed_ms=answer.elapsed_ms,
        token=answer.token,
    )
    return True
