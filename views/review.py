"""Review: agreement between annotators, the adjudication and override queue, QC status, throughput, final labels.

Reviewers may see who gave which label; annotators never reach this page
(the role check below runs on every rerun, before anything is read).
"""

import enum
from collections.abc import Callable
from functools import partial
from typing import Any, Literal, TypeVar

import pandas as pd
import streamlit as st

from core.resolution import STATES
from core.scale import GRADES
from db.adjudication import (
    assign_adjudication,
    assign_adjudications,
    eligible_adjudicators,
    override_labels,
    pool_adjudicators,
    set_pool_adjudicators,
)
from db.markers import package_marker, qc_marker
from db.pools import pool_names
from db.queries import run_names
from db.ranked_lists import RankedList, pool_version, ranked_list
from db.resolution import override_label
from db.review import PairReview, active_users, activity_marker, filter_pairs, pair_review
from db.vocab import Role
from pooljudge.dashboard_tables import review_table as review_table_of
from pooljudge.ui.auth import require_role
from pooljudge.ui.background import background, polls_in, shown_value
from pooljudge.ui.common import (
    blank_missing,
    collection_box,
    collections_or_stop,
    flash,
    get_store,
    md_escape,
    show_flash,
    show_rows,
)
from pooljudge.ui.highlight import show_text
from pooljudge.ui.keys import value_keys
from pooljudge.ui.ranked_component import entry_payload, prefetch, queries_of_pool, show_ranked_list
from pooljudge.ui.review_agreement import agreement_tab
from pooljudge.ui.review_tables import (
    count,
    excluded_table,
    final_text,
    flagged_table,
    labels_tables,
    labels_text,
    qc_tables,
    queue_table,
    throughput_tables,
)
from pooljudge.ui.table_pages import matching_options, paged_rows

account = require_role(Role.REVIEWER, Role.ADMIN)

st.title("Review")
store = get_store()
collections = collections_or_stop(store)
info = collection_box(st, collections, key="review_collection")
marker: object = None  # the collection's judgment marker, read by each run of the tabs (tabs_view)


WHAT = {
    "queue": "the adjudication queue",
    "excluded": "the excluded pairs",
    "pairs": "the reviewable pairs",
    "throughput": "the throughput",
    "flagged": "the flagged items",
    "distribution": "the final labels",
    "table": "the pairs table",
    "packages": "the packages",
    "rounds": "the QC rounds",
    "agreement": "the agreement",
}


DONE = "review_done"  # flash slots (pooljudge.ui.common.flash) shown in the notice area above the tabs
REFUSED_SLOT = "review_refused"
T = TypeVar("T")


class Refused(enum.Enum):
    """What :func:`write` returns for a refused write; one member, so ``result is not Refused.WRITE`` narrows."""

    WRITE = "refused"


def stored(message: str) -> None:
    """Show ``message`` above the tables, which this run reads afresh (the write changed them)."""
    flash(message, where=DONE)
    background().touch((store.url, info.name))


def done(message: str) -> None:
    """:func:`stored`, then rerun so that the page shows the write's outcome."""
    stored(message)
    st.rerun()


def refuse(message: str) -> None:
    """Keep a refusal (plain text) for the notice area, from a callback that runs before the page is drawn."""
    flash(md_escape(message), "error", where=REFUSED_SLOT)


REFUSALS = (ValueError, PermissionError, LookupError)
"""What a write raises when it refuses (checked before anything is stored): shown, never a crash."""


def write(action: Callable[..., T], *args, deferred: bool = False, **kwargs) -> T | Literal[Refused.WRITE]:
    """The result of one write, or ``Refused.WRITE``; a refusal (checked in the write) is shown as an error.

    ``deferred`` (in a button callback, which runs before the page is drawn): the error is kept for the notice
    area above the tabs, so that the page's layout, and with it the tab on screen, stays the same.
    """
    try:
        with store.write() as session:
            return action(session, *args, **kwargs)
    except REFUSALS as exc:
        if deferred:
            refuse(str(exc))
        else:
            st.error(md_escape(str(exc)))
        return Refused.WRITE


is_admin = account.role == Role.ADMIN


def table(name: str, key: Any = None) -> Any:
    """The collection's table ``name`` (a key of ``WHAT``), computed in the background once per judgment marker.

    The key also counts the writes made from this page that move no judgment (reassignments); a table
    that takes long is shown as last computed while the new one is computed (pooljudge.ui.background).
    """
    scope = (store.url, info.name)
    key = (marker, background().generation(scope)) if key is None else key
    collection = info.name
    return shown_value((*scope, name), key, partial(review_table_of, store.url, collection, name), what=WHAT[name])


def users() -> list[str]:
    """The active accounts an admin may give work to."""
    with store.read() as session:
        return active_users(session, [Role.ANNOTATOR, Role.REVIEWER, Role.ADMIN])


def agreement_view() -> None:
    agreement_tab(table("agreement"))


def pairs_view() -> None:
    rows = table("table")
    shown = pair_filters(rows)
    on_page = pairs_table(shown, len(rows))
    if shown:
        bulk_actions(shown, on_page)
    override_view()


PAIR_FILTERS = ("review_search", "review_annotator", "review_state", "review_final", "review_label")


def pair_filters(rows: list) -> list:
    """The filter boxes above the pairs table, and the pairs of ``rows`` they let through."""
    people = sorted({user for p in rows for user in p.labels} | {p.fourth for p in rows if p.fourth})
    f1, f2, f3, f4, f5 = st.columns([3, 2, 2, 2, 2])
    search = f1.text_input("Search query text or id, passage id", key="review_search", persist_state="page")
    annotator = f2.selectbox(
        "Annotator",
        [None, *people],
        key="review_annotator",
        persist_state="page",
        format_func=lambda u: "any" if u is None else u,
    )
    state = f3.selectbox(
        "State",
        [None, *STATES],
        key="review_state",
        persist_state="page",
        format_func=lambda x: "any" if x is None else x.replace("_", " "),
    )
    final_grade = f4.selectbox(
        "Final label",
        [None, *GRADES, "excluded"],
        key="review_final",
        persist_state="page",
        format_func=lambda g: "any" if g is None else str(g),
    )
    label = f5.selectbox(
        "Given label" if annotator is None else f"Label by {annotator}",
        [None, *GRADES],
        key="review_label",
        persist_state="page",
        format_func=lambda g: "any" if g is None else str(g),
    )
    return filter_pairs(rows, search=search, annotator=annotator, state=state, final_grade=final_grade, label=label)


def pairs_table(shown: list, total: int) -> list:
    """The pairs ``shown`` one page at a time (:mod:`pooljudge.ui.table_pages`); returns the page's pairs."""
    st.caption(f"{len(shown):,} of {total:,} pairs. Select a row to see the pair and override its final label.")
    if not shown:
        st.info("No pair matches these filters." if total else "No assigned pairs yet.")
    filters = tuple(st.session_state.get(k) for k in PAIR_FILTERS)
    shown = paged_rows(shown, key="review_page", filters=filters)
    frame = pd.DataFrame(
        [
            {
                "query id": p.qid,
                "query": p.query,
                "passage id": p.docid,
                "labels": labels_text(p.labels),
                "state": p.state.replace("_", " "),
                "final": final_text(p.final_grade, p.method),
                "adjudicator": p.fourth,
            }
            for p in shown
        ],
        columns=["query id", "query", "passage id", "labels", "state", "final", "adjudicator"],
    )
    event = st.dataframe(
        blank_missing(frame),
        hide_index=True,
        width="stretch",
        key="review_table",
        on_select="rerun",
        selection_mode="single-row",
    )
    picked = event.selection.rows if event is not None else []
    chosen_pair = shown[picked[0]] if picked and picked[0] < len(shown) else None
    if chosen_pair is not None and st.session_state.get("review_picked") != (chosen_pair.qid, chosen_pair.docid):
        # a new row was chosen: the pair boxes below follow it (they are drawn after this, so this is allowed)
        st.session_state["review_picked"] = (chosen_pair.qid, chosen_pair.docid)
        st.session_state["override_query"] = chosen_pair.qid
        st.session_state["override_passage"] = chosen_pair.docid
    return shown


def bulk_actions(shown: list, on_page: list) -> None:
    with st.expander(f"Bulk actions on the {count(len(shown), 'pair')} shown"):
        # the box offers the page's pairs: 20,000 options would be sent to the browser on every run
        names = {f"{p.qid} / {p.docid}": p for p in on_page}
        chosen = st.multiselect("Pairs on this page (none chosen: all pairs shown)", list(names), key="bulk_pairs")
        targets = [names[n] for n in chosen if n in names] or shown
        shown_keys = [(p.query_id, p.passage_id) for p in targets]

        def bulk_override(keys: list[tuple[int, int]]) -> None:
            # bound to the pairs on screen when the form was drawn, not to what the filters match now
            choice = st.session_state["bulk_grade"]
            grade_value = None if choice == "exclude" else int(choice)
            results = write(
                override_labels,
                account.id,
                [(q, p, grade_value) for q, p in keys],
                st.session_state.get("bulk_reason", ""),
                deferred=True,
            )
            if results is not Refused.WRITE:
                stored(
                    f"Overrode {count(len(results), 'final label')} "
                    f"({'excluded' if grade_value is None else grade_value})."
                )

        with st.form("bulk_override"):
            st.caption(
                f"Override the final label of {count(len(targets), 'pair')} with one reason (each override is "
                "stored on its own; the labels stay)."
            )
            st.radio(
                "Final label",
                [*GRADES, "exclude"],
                horizontal=True,
                key="bulk_grade",
                format_func=lambda g: "exclude the pairs" if g == "exclude" else str(g),
            )
            st.text_area("Reason (required)", key="bulk_reason")
            st.form_submit_button(
                f"Override {count(len(targets), 'pair')}",
                key="bulk_override_submit",
                on_click=bulk_override,
                args=(shown_keys,),
            )
        if is_admin:
            bulk_assign_form(targets, users())


def bulk_assign_form(targets: list, accounts: list[str]) -> None:
    waiting = [(p.query_id, p.passage_id) for p in targets if p.state == "needs_fourth"]

    def bulk_assign(keys: list[tuple[int, int]]) -> None:
        who = st.session_state.get("bulk_assign_user")
        if not keys:
            refuse("None of these pairs waits for a 4th label.")
            return
        assigned = write(assign_adjudications, account.id, keys, who, deferred=True)
        if assigned is not Refused.WRITE:
            stored(f"Gave {count(assigned, 'adjudication')} to {md_escape(str(who))}.")

    with st.form("bulk_assign"):
        st.caption(
            f"{len(waiting):,} of these pairs wait for a 4th label. Give their adjudication to "
            "one account (it must be eligible for every pair: from the pair's pool or the pool's "
            "adjudicator list)."
        )
        st.selectbox("Account", accounts, key="bulk_assign_user")
        st.form_submit_button("Assign adjudications", key="bulk_assign_submit", on_click=bulk_assign, args=(waiting,))


def override_view() -> None:
    st.subheader("Override a final label")
    pairs = table("pairs")
    if not pairs:
        st.caption("No assigned pairs yet.")
        return
    qid = st.selectbox("Query", list(pairs), key="override_query")
    docid = st.selectbox("Passage", pairs[qid], key="override_passage")
    with store.read() as session:
        pair = pair_review(session, info.name, qid, docid)
    with st.container(border=True):
        # verbatim (st.html, never Markdown), the query's terms marked in the passage as annotators saw them
        st.caption("Query")
        show_text(pair.query, language=info.language)
        st.caption("Passage")
        show_text(pair.title, query=pair.query, language=info.language, bold=True)
        show_text(pair.passage, query=pair.query, language=info.language)
    left, right = st.columns(2)
    left.dataframe(pd.DataFrame({"annotator": list(pair.labels), "label": list(pair.labels.values())}), hide_index=True)
    final = (
        "none yet"
        if pair.method is None
        else (f"{pair.final_grade if pair.final_grade is not None else 'excluded'} ({pair.method})")
    )
    right.markdown(
        f"**Final label:** {md_escape(final)}  \n**State:** {md_escape(pair.state)}"
        + (f"  \n**4th annotator:** {md_escape(pair.fourth)}" if pair.fourth else "")
    )
    if pair.reason:
        right.caption("Reason")
        show_text(pair.reason, container=right)
    if pair.overrides:
        show_rows([{**o, "grade": "excluded" if o["grade"] is None else o["grade"]} for o in pair.overrides])
    override_form(pair, qid, docid)


def override_form(pair: PairReview, qid: str, docid: str) -> None:
    st.caption("Keys: 0-3 choose the final label, X excludes the pair; then give the reason and press Override.")
    value_keys("override_grade", [*GRADES, "exclude"], prefix="override_key")
    with st.form("override"):
        grade_options: list[int | str] = [*GRADES, "exclude"]
        grade = st.radio(
            "Final label",
            grade_options,
            horizontal=True,
            key="override_grade",
            format_func=lambda g: "exclude the pair" if g == "exclude" else str(g),
        )
        reason = st.text_area("Reason (required)", key="override_reason")
        submitted = st.form_submit_button("Override", type="primary", key="override_submit")
    if submitted:
        result = write(
            override_label,
            account.id,
            pair.query_id,
            pair.passage_id,
            None if grade == "exclude" else int(grade),
            reason,
        )
        if result is not Refused.WRITE:
            outcome = "excluded" if result.grade is None else f"set to {result.grade}"
            done(f"Final label of {md_escape(qid)} / {md_escape(docid)} {outcome}.")


def ranked_view() -> None:
    with store.read() as session:
        pools = pool_names(session, info.name, selected=True)
        runs = run_names(session, info.name)
    if not pools:
        st.info("No pool with selected pairs in this collection yet.")
        return
    r1, r2, r3 = st.columns([2, 4, 2])
    pool_name = r1.selectbox("Pool", pools, key="ranked_pool")
    with store.read() as session:
        version = pool_version(session, info.name, pool_name)
    queries = queries_of_pool(store, store.url, info.name, pool_name, version)
    texts = {qid: (text, n) for qid, text, n in queries}
    offered = matching_options(r2, {q: t for q, (t, _) in texts.items()}, key="ranked_find", what="queries")
    # the query text is shown as plain text in the box (selectbox options are never Markdown)
    qid = r2.selectbox(
        "Query",
        offered,
        key="ranked_query",
        format_func=lambda q: f"{q} · {texts[q][0][:80]} ({texts[q][1]} passages)",
    )
    # "" rather than None for the pool's order: a box whose value is None shows its placeholder, not the option
    order = (
        r3.selectbox(
            "Order",
            ["", *runs],
            key="ranked_order",
            format_func=lambda r: f"rank in run {r}" if r else "pool order",
        )
        or None
    )
    with store.read() as session:
        ranked = ranked_list(session, info.name, pool_name, qid, run=order)
    show_text(ranked.query, language=info.language, bold=True, label=f"Query {ranked.qid}")
    final_counts = pd.Series(
        [e.final_grade for e in ranked.entries if e.method is not None and e.final_grade is not None],
        dtype="object",
    ).value_counts()
    st.caption(
        f"{len(ranked.entries)} pooled passages; final labels: "
        + (", ".join(f"{g}: {final_counts.get(g, 0)}" for g in GRADES))
        + f"; excluded: {sum(1 for e in ranked.entries if e.state == 'excluded')}"
        + f"; without a final label: {sum(1 for e in ranked.entries if e.method is None)}."
    )
    ranked_form(ranked, pool_name, order)


def ranked_entries(ranked: RankedList, order: str | None) -> list[dict]:
    """Each passage of ``ranked`` for the list's component, with its final label and every annotator's in words."""
    return [
        entry_payload(
            e,
            ranked.query,
            order,
            info.language,
            final=final_text(e.final_grade, e.method)
            or ("not labelled yet" if e.state == "unlabelled" else e.state.replace("_", " ")),
            labels=labels_text(e.labels) or "no labels yet",
        )
        for e in ranked.entries
    ]


def store_overrides(qid: str, changes: list[tuple[int, int, int | None]], reason: str) -> str | None:
    """Store the labels set on the ranked list of ``qid`` (its component's callback): a refusal in words, or
    None once stored."""
    try:
        with store.write() as session:
            results = override_labels(session, account.id, changes, reason)
    except REFUSALS as exc:
        return str(exc)
    stored(f"Set {count(len(results), 'final label')} of query {md_escape(qid)}.")
    return None


def ranked_form(ranked: RankedList, pool: str, order: str | None) -> None:
    show_ranked_list(
        ranked,
        pool=pool,
        order=order,
        entries=ranked_entries(ranked, order),
        store_changes=partial(store_overrides, ranked.qid),
    )


def adjudication_view() -> None:
    st.subheader("Waiting for a 4th annotator")
    queue_table(table("queue"))
    st.subheader("Excluded pairs")
    excluded_table(table("excluded"))

    if is_admin:
        accounts = users()
        reassign_view(accounts)
        adjudicators_view(accounts)


def reassign_view(accounts: list[str]) -> None:
    st.subheader("Reassign an open adjudication")
    if not table("queue"):
        st.caption("No adjudication is open.")
    else:
        queue = {f"{p.qid} / {p.docid}": p for p in table("queue")}
        a1, a2 = st.columns(2)
        open_name = a1.selectbox(
            "Pair",
            list(queue),
            key="reassign_pair",
            format_func=lambda n: f"{n} (now: {queue[n].fourth or 'nobody'})",
        )
        open_pair = queue[open_name]
        with store.read() as session:
            eligible = eligible_adjudicators(session, open_pair.query_id, open_pair.passage_id)
        # every account is offered and the write checks eligibility: options that changed with each pair
        # would make Streamlit switch the box to another account between the click and the write
        a2.selectbox("Give it to", accounts, index=None, key="reassign_user", placeholder="choose an account")
        a2.caption(
            "Eligible now: "
            + (
                ", ".join(eligible)
                if eligible
                else "nobody (the pool's annotators all hold this pair: add an adjudicator "
                "for the pool below, or override the final label)"
            )
            + "."
        )

        def reassign(query_id: int, passage_id: int, name: str) -> None:
            # the pair is the one on screen when the button was drawn, even if the queue changed since
            target = st.session_state.get("reassign_user")
            if target is None:
                refuse("Choose the account to give the adjudication to.")
                return
            previous = write(assign_adjudication, account.id, query_id, passage_id, target, deferred=True)
            if previous is not Refused.WRITE:
                stored(
                    f"Adjudication of {md_escape(name)} given to {md_escape(target)}"
                    + (f" (was {md_escape(previous)})." if previous else ".")
                )

        st.button(
            "Reassign",
            key="reassign_submit",
            on_click=reassign,
            args=(open_pair.query_id, open_pair.passage_id, open_name),
        )


def adjudicators_view(accounts: list[str]) -> None:
    st.subheader("Adjudicators per pool")
    st.caption(
        "A three-way split goes to one of the pool's own annotators, or, when a list is set here, only "
        "to the accounts on it."
    )
    with store.read() as session:
        all_pools = pool_names(session, info.name)
    if all_pools:
        b1, b2 = st.columns([1, 2])
        list_pool = b1.selectbox("Pool", all_pools, key="adjudicators_pool")
        with store.read() as session:
            current = pool_adjudicators(session, info.name, list_pool)
        wanted = b2.multiselect(
            "Adjudicators (empty: the pool's annotators)",
            sorted(set(accounts) | set(current)),
            default=current,
            key=f"adjudicators_{list_pool}",
        )
        if st.button("Save adjudicators", key="adjudicators_submit"):
            saved = write(set_pool_adjudicators, info.name, list_pool, wanted, by=account.id)
            if saved is not Refused.WRITE:
                done(
                    f"Adjudicators of pool {md_escape(list_pool)}: "
                    + (md_escape(", ".join(saved)) if saved else "none (the pool's annotators adjudicate)")
                    + "."
                )


def qc_view() -> None:
    with store.read() as session:  # a resubmitted package changes no judgment: the QC tables' own keys
        generation = background().generation((store.url, info.name))
        packages_key, qc_key = (package_marker(session), generation), (qc_marker(session), generation)
    packages, rounds = table("packages", packages_key), table("rounds", qc_key)
    qc_tables(packages, rounds)


def throughput_view() -> None:
    throughput_tables(table("throughput"))
    st.subheader("Flagged items")
    flagged_table(table("flagged"))


def labels_view() -> None:
    labels_tables(table("distribution"))


TABS = {
    "Agreement": agreement_view,
    "Pairs": pairs_view,
    "Ranked list": ranked_view,
    "Adjudication": adjudication_view,
    "Quality control": qc_view,
    "Throughput": throughput_view,
    "Final labels": labels_view,
}


@st.fragment
def tabs_view() -> None:
    """The notices and the tabs, a fragment: a tab switch or a widget in a tab reruns only this function.

    The rest of a run (app.py, the sign-in check, the sidebar, the collection box) is the same for every tab:
    redrawing it would make each tab switch cost a whole page run.  The account is checked again on every run of
    the fragment, and the judgment marker read afresh, so the tables follow the labels stored since.
    """
    global account, marker
    account = require_role(Role.REVIEWER, Role.ADMIN)
    with store.read() as session:
        marker = activity_marker(session, info.name)  # changes with every judgment: cached tables refresh
    # always drawn, even empty: an element appearing above the tabs would make the browser show the first tab again
    notice = st.container()
    show_flash(DONE, notice)
    show_flash(REFUSED_SLOT, notice)
    # on_change='rerun' makes the tabs lazy: only the open tab's body runs (and reads its tables)
    for tab, view in zip(st.tabs(list(TABS), key="review_tab", on_change="rerun"), TABS.values()):
        if tab.open:
            try:
                with tab, polls_in(notice):
                    view()
            finally:  # also when the tab stops at "Computing ...": a first run under load does
                if view is not ranked_view:  # read ahead what its first visit reads, while this tab is looked at
                    prefetch(store, info.name, st.session_state.get("ranked_pool"), info.language)


tabs_view()
