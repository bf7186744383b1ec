"""Admin page pieces that say why something waits: packages held by a flag, pairs left out of the qrels."""

from __future__ import annotations

from functools import partial
from typing import Any

import streamlit as st

from db.markers import qrels_marker
from db.qc_rounds import WaitingPackage, waiting_on_flags
from db.unresolved import UnresolvedPair, as_rows, counts_by_reason, unresolved_pairs
from pooljudge.dashboard_tables import admin_qrels_state
from pooljudge.ui.background import shown_value
from pooljudge.ui.common import md_escape, show_rows


def flag_waits(store: Any) -> None:
    """One warning per package that is finished but for flagged items, with a link to the flagged items."""
    with store.read() as session:
        waiting = waiting_on_flags(session)
    for package in waiting:
        st.warning(flag_wait_text(package))
    if waiting:
        # a relative link: the Review page's url path next to this one (st.page_link needs st.navigation's pages,
        # which a page run on its own does not have)
        st.markdown("[Open the flagged items (Review › Throughput › Flagged items)](review)")


def flag_wait_text(package: WaitingPackage) -> str:
    """Why a package is not in the QC list: it waits for its flags (escaped for markdown)."""
    pairs = ", ".join(f"{q} / {d}" for q, d in package.flagged[:5]) + (" …" if len(package.flagged) > 5 else "")
    n = len(package.flagged)
    return md_escape(
        f"Package {package.name} ({package.annotator}, {package.labelled}/{package.total} labelled) waits for "
        f"{n} flagged item{'s' * (n != 1)} to be resolved ({pairs}): a reviewer answers the flag under Review › "
        f"Throughput › Flagged items, then {package.annotator} labels it from 'My earlier items'; the package "
        "can start QC after that."
    )


def own_flag_wait_text(package: WaitingPackage) -> str:
    """What the annotator's own package list says of a package held by its flags (escaped for markdown)."""
    pairs = ", ".join(f"{q} / {d}" for q, d in package.flagged[:5]) + (" …" if len(package.flagged) > 5 else "")
    n = len(package.flagged)
    return md_escape(
        f"Package {package.name} waits for {n} flagged item{'s' * (n != 1)} to be resolved ({pairs}): a reviewer "
        "answers the flag, then you label it from 'My earlier items'; the package can go to quality control "
        "after that."
    )


def live_state(store: Any, collection: str) -> tuple[int, list[UnresolvedPair]]:
    """``(final labels now, judged pairs without one)`` of ``collection``, computed in the background.

    Both read every judgment of the collection (most of a second on a 20,000-pair store).  They are keyed by
    :func:`db.markers.qrels_marker` (a few indexed aggregates, read on every run), which every label changes:
    under constant labelling the tab shows the last value at once and offers the newer one
    (:func:`pooljudge.ui.background.shown_value`).
    """
    with store.read() as session:
        marker = qrels_marker(session, collection)
    return shown_value(
        (store.url, "admin_qrels", collection),
        marker,
        partial(admin_qrels_state, store.url, collection),
        what="the final labels and the pairs a freeze leaves out",
    )


def left_out_now(store: Any, collection: str) -> dict[str, int]:
    """The judged pairs of ``collection`` without a final label, by reason, read now (after a freeze)."""
    with store.read() as session:
        return counts_by_reason(unresolved_pairs(session, collection))


def unresolved_panel(store: Any, collection: str) -> dict[str, int]:
    """The live final labels' count and what a freeze would leave out; returns the left-out counts by reason."""
    kept, pairs = live_state(store, collection)
    st.metric("Final labels now (a freeze keeps these)", f"{kept:,}")
    if pairs:
        counts = counts_by_reason(pairs)
        st.warning(
            md_escape(f"{len(pairs)} judged pairs have no final label and a freeze leaves them out: ")
            + ", ".join(f"{n} {md_escape(reason)}" for reason, n in counts.items())
            + ". `pooljudge export qrels --unresolved-median PATH` writes the median of their labels so far to a "
            "separate file."
        )
        # on_change="rerun": the list (hundreds of rows on a large store) is sent only while the expander is open;
        # the label is part of the expander's identity, so it leaves out the count (the warning says it): an open
        # list stays open while labels change the count
        listing = st.expander("List the pairs without a final label", key="unresolved_list", on_change="rerun")
        if listing.open:
            with listing:
                show_rows(as_rows(pairs), key="unresolved_pairs")
    return counts_by_reason(pairs)


def freeze_message(n: int, name: str, left_out: dict[str, int]) -> str:
    """What a freeze did (markdown): how many labels it froze and which judged pairs it left out, by reason."""
    text = f"Froze {n:,} labels as {md_escape(name)}."
    if left_out:
        total = sum(left_out.values())
        reasons = ", ".join(f"{k} {md_escape(reason)}" for reason, k in left_out.items())
        text += f" Left out {total} judged pair{'s' * (total != 1)} without a final label: {reasons}."
    return text


def qc_started(round_id: int, package: str) -> str:
    """What starting a round did (markdown): the round is under review, or it passed at once with nothing left."""
    from db.qc_rounds import NOTHING_LEFT, round_outcome
    from pooljudge.ui.common import get_store

    with get_store().read() as session:
        status, size, number = round_outcome(session, round_id)
    if status == "passed":
        return f"{md_escape(package)} round {number}: {NOTHING_LEFT}."
    return (
        f"QC round {round_id} started on {md_escape(package)}: {size} items, none reviewed in an earlier round "
        "except labels the annotator kept, which go to reviewers new to them."
    )


def version_left_out(store: Any, collection: str, version: str) -> str:
    """What a qrels version's download leaves out (markdown): the judged pairs not in it, by reason, or ``""``."""
    from db.queries import stored_qrels

    with store.read() as session:
        pairs = unresolved_pairs(session, collection, stored_qrels(session, collection, version))
    if not pairs:
        return ""
    reasons = ", ".join(f"{n} {md_escape(reason)}" for reason, n in counts_by_reason(pairs).items())
    return (
        f"This version holds resolved pairs only: {len(pairs)} judged pair{'s' * (len(pairs) != 1)} of the "
        f"collection {'are' if len(pairs) != 1 else 'is'} not in it ({reasons}). "
        "`pooljudge export qrels --list-unresolved` lists them; `--unresolved-median PATH` writes their median "
        "labels to a separate file."
    )
