"""Admin: accounts, assignment of pools to annotators, quality control rounds, frozen qrels versions."""

from functools import partial

import pandas as pd
import streamlit as st

from db.assignments import create_assignments
from db.markers import package_marker, qc_marker
from db.models import ROLES
from db.package_qc import close_qc_round, start_qc_round
from db.pools import list_pools
from db.queries import list_collections
from db.resolution import freeze_qrels
from db.review import active_users
from db.users import add_user, list_users, set_active, set_password
from db.vocab import PackageStatus, QcRoundStatus, Role
from pooljudge.dashboard_tables import admin_packages, admin_qc_tables
from pooljudge.ui.auth import require_role
from pooljudge.ui.background import background, polls_in, shown_value
from pooljudge.ui.common import collection_box, flash, get_store, md_escape, show_flash, show_rows
from pooljudge.ui.qc_states import flag_waits, freeze_message, left_out_now, qc_started, unresolved_panel

account = require_role(Role.ADMIN)
st.title("Admin")
store = get_store()


def done(section: str, text: str) -> None:
    """Keep what an action did for the section's flash slot and rerun, so every table on the page shows the new state."""
    flash(text, where=f"admin_{section}")
    background().touch(store.url)  # the QC tables are recomputed with the write in them
    st.rerun()


def snippet(text: str, limit: int = 80) -> str:
    """The start of a text, whitespace collapsed, for a table cell."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def users_view() -> None:
    show_flash("admin_users")
    with store.read() as session:
        accounts = list_users(session)
    show_rows([{"username": a.username, "role": a.role, "active": a.active} for a in accounts])
    add_col, state_col, password_col = st.columns(3)
    with add_col.form("add-user", clear_on_submit=True):
        st.markdown("**Add a user**")
        username = st.text_input("Username", key="new_username")
        role = st.selectbox("Role", ROLES, index=ROLES.index(Role.ANNOTATOR), key="new_role")
        password = st.text_input("Password (at least 8 characters)", type="password", key="new_password")
        added = st.form_submit_button("Add user", type="primary", key="add_user")
    if added:
        try:
            with store.write() as session:
                new = add_user(session, username.strip(), password, role)  # a stray space typed in the form
        except ValueError as exc:
            add_col.error(md_escape(str(exc)))
        else:
            done("users", f"Added {md_escape(new.username)} ({new.role}).")
    with state_col.container(border=True):
        st.markdown("**Disable or enable**")
        others = [a for a in accounts if a.id != account.id]  # an admin cannot lock themselves out
        if others:
            target = st.selectbox(
                "Account",
                others,
                key="state_user",
                format_func=lambda a: f"{a.username} ({a.role}, {'active' if a.active else 'disabled'})",
            )
            if st.button("Disable" if target.active else "Enable", key="toggle_user"):
                try:
                    with store.write() as session:
                        changed = set_active(session, target.username, not target.active)
                except LookupError as exc:
                    st.error(md_escape(str(exc)))
                else:
                    done("users", f"{md_escape(changed.username)} is now {'active' if changed.active else 'disabled'}.")
        else:
            st.caption("No other accounts.")
    with password_col.form("reset-password", clear_on_submit=True):
        st.markdown("**Reset a password**")
        who = st.selectbox("Account", [a.username for a in accounts], key="reset_user")
        new_password = st.text_input("New password", type="password", key="reset_password")
        reset = st.form_submit_button("Reset password", key="reset_submit")
    if reset:
        try:
            with store.write() as session:
                set_password(session, who, new_password)
        except (ValueError, LookupError) as exc:
            password_col.error(md_escape(str(exc)))
        else:
            done("users", f"Password of {md_escape(who)} reset.")


def assign_view() -> None:
    collections = all_collections()
    if not collections:
        st.info("No collections yet: import one first.")
        return
    info = collection_box(st, collections, key="assign_collection")
    with store.read() as session:
        pools = list_pools(session, info.name)
        annotators = active_users(session, [Role.ANNOTATOR])
    if not pools:
        st.caption("This collection has no pools yet: build one on the Pooling page.")
    elif not annotators:
        st.caption("No active annotators: add some on the Users tab.")
    else:
        assign_form(info.name, pools, annotators)


def assign_form(collection: str, pools: list, annotators: list[str]) -> None:
    with st.form("assign", enter_to_submit=False):  # Enter in a box must not create the assignments
        selected = {p.name: p.selected for p in pools}
        pool = st.selectbox(
            "Pool",
            list(selected),
            key="assign_pool",
            format_func=lambda name: f"{name} ({selected[name]:,} selected pairs)",
        )
        # the selection is kept in the session; an annotator added since the last run joins it
        # (a widget's default is read only when it is first drawn, so a new one was offered unselected)
        known = st.session_state.get("assign_known_annotators")
        if "assign_annotators" not in st.session_state or known is None:
            st.session_state["assign_annotators"] = list(annotators)
        else:
            keep = set(st.session_state["assign_annotators"]) | (set(annotators) - set(known))
            st.session_state["assign_annotators"] = [a for a in annotators if a in keep]
        st.session_state["assign_known_annotators"] = list(annotators)
        # persist_state: the tabs are lazy, and a widget not drawn (another tab open) would lose its value
        chosen = st.multiselect("Annotators", annotators, key="assign_annotators", persist_state="page")
        left, middle, right = st.columns(3)
        per_pair = left.number_input("Annotators per pair", min_value=1, max_value=10, value=3, key="assign_per_pair")
        package_size = middle.number_input("Package size", min_value=1, value=1000, key="assign_package_size")
        seed = right.number_input("Seed", min_value=0, value=0, key="assign_seed")
        group = st.checkbox(
            "Keep the passages of one query together",
            key="assign_group",
            help="Passages of a query follow one another in a package (queries shuffled); "
            "otherwise every pair is shuffled on its own.",
        )
        scale = st.radio(
            "Scale",
            ["graded", "binary"],
            horizontal=True,
            key="assign_scale",
            help="graded: 0-3 (keys 0-3); binary: relevant or not (keys N and Y)",
        )
        assign = st.form_submit_button("Create assignments", type="primary", key="assign_submit")
    if assign:
        settings = dict(per_pair=int(per_pair), seed=int(seed), package_size=int(package_size), group_by_query=group)
        assign_result(collection, pool, chosen, {**settings, "scale": scale})


def assign_result(collection: str, pool: str, chosen: list[str], settings: dict) -> None:
    try:
        with store.write() as session:
            summary = create_assignments(session, collection, pool, annotators=chosen, by=account.id, **settings)
    except (ValueError, LookupError, PermissionError) as exc:
        st.error(md_escape(str(exc)))
    else:
        st.success(f"{summary.tasks:,} new tasks for {summary.pairs:,} pairs of pool {md_escape(pool)}.")
        cols = st.columns(3)
        cols[0].metric("Pairs", f"{summary.pairs:,}")
        cols[1].metric("New tasks", f"{summary.tasks:,}")
        cols[2].metric("New packages", f"{len(summary.packages):,}")
        if summary.per_annotator:
            st.dataframe(
                pd.DataFrame([{"annotator": a, "new tasks": n} for a, n in sorted(summary.per_annotator.items())]),
                hide_index=True,
            )
            st.caption("Packages: " + ", ".join(md_escape(p) for p in summary.packages))


def qc_view() -> None:
    show_flash("admin_qc")
    with store.read() as session:
        generation = background().generation(store.url)
        packages_key, qc_key = (package_marker(session), generation), (qc_marker(session), generation)
        reviewers = active_users(session, [Role.REVIEWER, Role.ADMIN])
        plain_reviewers = active_users(session, [Role.REVIEWER])
    # computed in the background, keyed by the writes they depend on (pooljudge.ui.background): a label
    # moves the packages' progress, only QC moves the rounds and their disagreements
    packages = shown_value(
        (store.url, "admin_packages"), packages_key, partial(admin_packages, store.url), what="the packages table"
    )
    rounds, tables = shown_value(
        (store.url, "admin_qc"), qc_key, partial(admin_qc_tables, store.url), what="the QC tables"
    )
    if not packages:
        st.caption("No packages yet: create assignments first.")
    else:
        show_rows(
            [
                {
                    "package": p.name,
                    "annotator": p.annotator,
                    "collection": p.collection,
                    "status": p.status,
                    "labelled": f"{p.labelled}/{p.total}",
                    "QC rounds": p.rounds,
                    "last accuracy": p.last_accuracy,
                }
                for p in packages
            ]
        )
    # a returned package comes back once its annotator has answered the disputed items and resubmitted it
    ready = [
        p
        for p in packages
        if p.finished and p.status not in (PackageStatus.IN_QC, PackageStatus.PASSED, PackageStatus.REVISE)
    ]
    qc_start_form(ready, reviewers, plain_reviewers)
    flag_waits(store)  # a package finished but for a flag says so, instead of missing from the list silently
    qc_rounds_view(rounds)
    disagreements_view(tables)


def qc_start_form(ready: list, reviewers: list[str], plain_reviewers: list[str]) -> None:
    st.subheader("Start a QC round")
    st.caption(
        "A round samples only items no earlier round of the package sampled (whatever the seed), plus every "
        "disputed label the annotator kept in rework: those go, with the annotator's note, to the chosen "
        "reviewers who have not reviewed them, and that review alone decides them."
    )
    if not ready:
        st.caption("No finished package is waiting for review.")
    else:
        with st.form("qc-start", enter_to_submit=False):
            package = st.selectbox(
                "Finished package",
                ready,
                key="qc_package",
                format_func=lambda p: f"{p.name} ({p.annotator}, {p.status})",
            )
            chosen = st.multiselect(
                "Reviewers (at least two)",
                reviewers,
                key="qc_reviewers",
                default=plain_reviewers if len(plain_reviewers) >= 2 else reviewers,
            )
            left, middle, right = st.columns(3)
            sample = left.number_input("Sample size", min_value=1, value=100, key="qc_sample")
            threshold = middle.number_input(
                "Pass threshold (accuracy)", min_value=0.0, max_value=1.0, value=0.93, step=0.01, key="qc_threshold"
            )
            seed = right.number_input("Seed", min_value=0, value=0, key="qc_seed")
            start = st.form_submit_button("Start QC round", type="primary", key="qc_start")
        if start:
            try:
                with store.write() as session:
                    round_id = start_qc_round(
                        session,
                        package.id,
                        reviewers=chosen,
                        sample_size=int(sample),
                        seed=int(seed),
                        threshold=float(threshold),
                        by=account.id,
                    )
            except (ValueError, LookupError, PermissionError) as exc:
                st.error(md_escape(str(exc)))
            else:
                done("qc", qc_started(round_id, package.name))


def qc_rounds_view(rounds: list) -> None:
    st.subheader("QC rounds")
    if not rounds:
        st.caption("No QC rounds yet.")
    else:
        show_rows(
            [
                {
                    "round id": r.id,
                    "package": r.package,
                    "annotator": r.annotator,
                    "round": r.round_no,
                    "status": r.status,
                    "sample": r.sample_size,
                    "threshold": r.threshold,
                    "reviewed": ", ".join(f"{u}: {n}/{r.sample_size}" for u, n in r.reviewed.items()),
                    "accuracy": r.accuracy,
                    "checked": r.n_checked,
                    "decided": r.decided_at,
                }
                for r in rounds
            ]
        )
        open_rounds = [r for r in rounds if r.status == QcRoundStatus.REVIEWING]
        if open_rounds:
            closing = st.selectbox(
                "Round under review",
                open_rounds,
                key="qc_close_round",
                format_func=lambda r: f"{r.package} round {r.round_no}",
            )
            if st.button("Close round and decide", key="qc_close"):
                try:
                    with store.write() as session:
                        result = close_qc_round(session, closing.id, by=account.id)
                except (ValueError, LookupError, PermissionError) as exc:
                    st.error(md_escape(str(exc)))
                else:
                    done(
                        "qc",
                        f"{md_escape(closing.package)} round {closing.round_no}: accuracy {result['accuracy']:.3f} on "
                        f"{result['n_checked']} pairs, decision **{result['decision']}**"
                        f" ({len(result['disagreements'])} disagreements, listed under Disagreements by round).",
                    )


def disagreements_view(tables: list) -> None:
    st.subheader("Disagreements by round")
    if not tables:
        st.caption("No decided QC rounds yet.")
    for table in tables:
        accuracy = "n/a" if table.accuracy is None else f"{table.accuracy:.3f}"
        with st.expander(
            f"{md_escape(table.package)} ({md_escape(table.annotator)}) · round {table.round_no} · "
            f"{table.status} · accuracy {accuracy} on {table.n_checked} pairs · "
            f"{len(table.items)} disagreements"
        ):
            if not table.items:
                st.caption("The annotator agreed with the reviewers on every checked pair.")
            else:
                # st.dataframe shows cell text as plain text: nothing to escape
                show_rows(
                    [
                        {
                            "query id": i.query_id,
                            "query": snippet(i.query),
                            "passage id": i.passage_id,
                            "annotator's label": i.annotator_label,
                            "reviewers' labels": ", ".join(f"{who}: {g}" for who, g in i.reviewer_labels.items()),
                            "consensus": "" if i.consensus is None else str(i.consensus),
                            "reviewers' notes": " | ".join(f"{who}: {note}" for who, note in i.notes.items()),
                        }
                        for i in table.items
                    ],
                    key=f"qc_disagreements_{table.round_id}",
                )


def qrels_view() -> None:
    show_flash("admin_qrels")
    collections = all_collections()
    if not collections:
        st.info("No collections yet.")
    else:
        # the list is read on every run of the tab, so a freeze shows in the next run
        info = collection_box(st, collections, key="qrels_collection")
        unresolved_panel(store, info.name)
        st.caption("Existing versions: " + (", ".join(md_escape(v) for v in info.qrels_versions) or "none"))
        with st.form("freeze", clear_on_submit=True):
            name = st.text_input("Version name", placeholder="e.g. round-1", key="freeze_name")
            note = st.text_area("Note", key="freeze_note")
            freeze = st.form_submit_button("Freeze qrels", type="primary", key="freeze_submit")
        if freeze:
            try:
                if not name.strip():
                    raise ValueError("give the version a name")
                with store.write() as session:
                    n = freeze_qrels(session, info.name, name.strip(), note=note, user_id=account.id)
            except (ValueError, LookupError, PermissionError) as exc:
                st.error(md_escape(str(exc)))
            else:
                # read now: the panel may show a value computed before the last labels
                done("qrels", freeze_message(n, name.strip(), left_out_now(store, info.name)))


def all_collections() -> list:
    with store.read() as session:
        return list_collections(session)


TABS = {"Users": users_view, "Assignments": assign_view, "Quality control": qc_view, "Qrels": qrels_view}


@st.fragment
def tabs_view() -> None:
    """The tabs, a fragment: a tab switch or a widget in a tab reruns this function, not app.py and the sidebar.

    The account is checked again on every run of the fragment (a write then names the account as it is now).
    """
    global account
    account = require_role(Role.ADMIN)
    home = st.container()  # the first-time refresher's place (polls_in); always drawn, so the tabs keep their place
    # on_change='rerun' makes the tabs lazy: only the open tab's body runs
    for tab, view in zip(st.tabs(list(TABS), key="admin_tab", on_change="rerun"), TABS.values()):
        if tab.open:
            with tab, polls_in(home):
                view()


tabs_view()
