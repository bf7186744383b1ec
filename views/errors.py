"""Error analysis: sample a run's failing queries, tag their (query, passage) pairs, and study the tags.

This follows DuReader-retrieval's error-sampling workflow (Qiu et al., EMNLP
2022, Section 5): sample N judged queries whose top k holds no relevant
passage and tag each pair with an error category.  Detectors
(:mod:`core.detectors`) suggest tags with their evidence; an analyst confirms
or rejects them and adds tags of their own, from the built-in taxonomy
(DuReader-retrieval Table 10 and DAPR's NQ-hard categories) or from categories
the project defines.  The dashboards show the category distribution, a
measure per category and run (DAPR, Figure 3), examples and a drill-down.

The store logic lives in :mod:`db.error_analysis` and :mod:`db.error_categories` (a
project's own categories, stored per collection); this page is glue, one
function per tab, and only the open tab runs.  Every
untrusted text (queries, passages, notes, evidence, category names) is
rendered verbatim: through ``st.dataframe``, ``show_text`` / ``st.html`` (escaped HTML, no Markdown) or,
in Markdown-only labels, ``md_escape``.
"""

import pandas as pd
import streamlit as st

from core.metrics import MEASURE_CHOICES, evaluate
from db.error_analysis import (
    category_distribution,
    collection_term_frequencies,
    earlier_chunks,
    failing_queries,
    list_tags,
    query_categories,
    sample_error_pairs,
    set_tag_status,
    suggest_tags,
    tag_pair,
)
from db.error_categories import (
    create_error_category,
    delete_error_category,
    list_error_categories,
    rename_error_category,
)
from db.queries import NotFound, iter_queries, passages_by_id
from db.review import activity_marker
from db.users import list_users
from db.vocab import Role
from pooljudge.ui.alignment_job import alignment_tab
from pooljudge.ui.auth import require_role
from pooljudge.ui.common import (
    LIVE,
    collection_box,
    collections_or_stop,
    flash,
    get_store,
    load_qrels_source,
    md_escape,
    qrels_source_box,
    shared_run,
    show_flash,
)
from pooljudge.ui.error_charts import OWN_GROUP, distribution_chart, examples_table, metric_chart, own_categories_table
from pooljudge.ui.error_dashboards import (
    GROUP_NAMES,
    evidence_detector,
    evidence_spans,
    evidence_summary,
    marked_html,
    ordered_categories,
    user_category_names,
)
from pooljudge.ui.highlight import VERBATIM_STYLE, show_text
from pooljudge.ui.level import level_caption, level_control, level_input
from pooljudge.ui.lexicon_form import lexicon_tab

STATUSES = ("suggested", "confirmed", "rejected")
STATUS_ICONS = {"suggested": ":material/help:", "confirmed": ":material/check_circle:", "rejected": ":material/cancel:"}
EVIDENCE_MARK = "background-color: #ffd8cc"  # evidence spans, unlike the yellow query-term marks

account = require_role(Role.ADMIN, Role.REVIEWER)
state = st.session_state
st.title("Error analysis")
store = get_store()
collections = {c.name: c for c in collections_or_stop(store)}

left, middle, right = st.columns([2, 2, 1])
info = collection_box(left, list(collections.values()), key="errors_collection")
source = qrels_source_box(middle, store, info, key="errors_source")
level = level_input(
    right,
    info,
    key="errors_level",
    help="A passage graded at least this is relevant: a query fails when none is in its top k. "
    "Starts at the collection's level, which the Metrics page and `pooljudge eval -c` use too.",
)
st.caption(level_caption(level, info.relevance_level))
level_control(st, store, info, level, account, key="errors_level")
language = info.language


# --------------------------------------------------------------------------- cached reads


@st.cache_data(ttl=3600, show_spinner="Counting the collection's words...")
def term_frequencies(url: str, collection: str, passages: int) -> dict[str, int]:
    with store.read() as session:
        return collection_term_frequencies(session, collection)


@st.cache_data(ttl=600, show_spinner="Evaluating the runs...", max_entries=64)
def per_query_values(
    url: str, collection: str, run: str, measure: str, level: int, qrels_key: tuple, _qrels: dict
) -> dict[str, float]:
    # keyed by qrels_key (source and label activity), not by hashing every judgment on each rerun
    values = next(iter(evaluate(_qrels, shared_run(url, collection, run), [measure], level=level).values()))
    return {qid: v for qid, v in values.items() if qid != "all"}


@st.cache_data(ttl=600, show_spinner="Looking up texts...")
def lookup_texts(url: str, collection: str, qids: tuple[str, ...], docids: tuple[str, ...]) -> tuple[dict, dict]:
    """Query texts and passages (text, title, document, position) of tagged pairs outside the current sample."""
    want_q, want_d = set(qids), set(docids)
    queries: dict[str, str] = {}
    with store.read() as session:
        if want_q:
            queries = {q.id: q.text for q in iter_queries(session, collection) if q.id in want_q}
        passages = {
            p.id: {"text": p.text, "title": p.title, "document": p.doc_id, "position": p.position}
            for p in passages_by_id(session, collection, want_d).values()
        }
    return queries, passages


def source_qrels() -> dict:
    with store.read() as session:
        return load_qrels_source(session, info.name, source)


# --------------------------------------------------------------------------- categories and tags

with store.read() as session:
    all_tags = list_tags(session, info.name)
    stored = {c.key: c for c in list_error_categories(session, info.name)}
    usernames = {a.id: a.username for a in list_users(session)}
# a category used by tags before categories were stored keeps the name its tags recorded; a stored one's wins
own = user_category_names(all_tags) | {key: c.name for key, c in stored.items()}
categories = ordered_categories(own)
names = {c.id: c.name for c in categories}
groups = {c.id: GROUP_NAMES.get(c.group, c.group) for c in categories}
descriptions = {c.id: stored[c.id].description if c.id in stored else c.description for c in categories}
sample = state.get("errors_sample")
if sample is not None and sample["collection"] != info.name:
    sample = None


def decide(tag_id: int, status: str, where: str) -> None:
    try:
        with store.write() as session:
            set_tag_status(session, tag_id, status, user_id=account.id)
    except (NotFound, ValueError) as exc:
        flash(md_escape(str(exc)), "error", where=f"errors_{where}")
    else:
        flash(f"Tag #{tag_id} {status}.", where=f"errors_{where}")


def suggest(run: str, pairs: list[dict]) -> None:
    frequencies = term_frequencies(store.url, info.name, info.passages)
    try:
        with store.write() as session:
            count = suggest_tags(session, info.name, run, pairs, term_frequencies=frequencies)
    except (NotFound, ValueError) as exc:
        flash(md_escape(str(exc)), "error", where="errors_sample")
    else:
        flash(
            f"Stored {count} new suggestion{'s' * (count != 1)} for the {len(pairs)} sampled pairs "
            "(a suggestion already in the store, even a rejected one, is not stored again).",
            where="errors_sample",
        )


def add_tags(qid: str, doc_id: str, run: str | None) -> None:
    chosen, note = state.get("errors_new_tags", []), state.get("errors_note", "")
    if not chosen:
        flash("Choose at least one category.", "warning", where="errors_pair")
        return
    try:
        with store.write() as session:
            for category in chosen:
                tag_pair(
                    session,
                    info.name,
                    qid,
                    doc_id,
                    category,
                    user_id=account.id,
                    run_name=run,
                    note=note.strip(),
                    extra_categories=list(own),
                    category_name=own.get(category),
                )
    except (NotFound, ValueError) as exc:
        flash(md_escape(str(exc)), "error", where="errors_pair")
    else:
        state["errors_new_tags"], state["errors_note"] = [], ""
        flash(
            f"Added {len(chosen)} tag{'s' * (len(chosen) != 1)}: "
            + ", ".join(md_escape(names.get(c, c)) for c in chosen)
            + ".",
            where="errors_pair",
        )


def define_category() -> None:
    key = state.get("errors_new_id", "").strip()
    name = state.get("errors_new_name", "").strip() or key
    if key in names:  # built in, stored, or used by tags before categories were stored (the store checks too)
        flash(f"There already is a category {md_escape(key)}.", "error", where="errors_define")
        return
    try:
        with store.write() as session:
            create_error_category(
                session, info.name, key, name, state.get("errors_new_description", ""), created_by=account.username
            )
    except (NotFound, ValueError) as exc:
        # the message quotes the key and the name: untrusted
        flash(md_escape(str(exc)), "error", where="errors_define")
        return
    state["errors_new_id"], state["errors_new_name"], state["errors_new_description"] = "", "", ""
    flash(f"Category {md_escape(name)} ({md_escape(key)}) stored for this collection.", where="errors_define")


def rename_category(key: str) -> None:
    try:
        with store.write() as session:
            renamed = rename_error_category(
                session,
                info.name,
                key,
                state.get(f"errors_rename_name::{key}", "").strip(),
                state.get(f"errors_rename_description::{key}", ""),
            )
    except (NotFound, ValueError) as exc:
        flash(md_escape(str(exc)), "error", where="errors_categories")
    else:
        flash(f"Category {md_escape(key)} is now called {md_escape(renamed.name)}.", where="errors_categories")


def delete_category(key: str) -> None:
    try:
        with store.write() as session:
            delete_error_category(session, info.name, key)
    except (NotFound, ValueError) as exc:
        flash(md_escape(str(exc)), "error", where="errors_categories")
    else:
        state.pop("errors_manage", None)
        flash(f"Category {md_escape(key)} deleted.", where="errors_categories")


def step(delta: int, count: int) -> None:
    state["errors_pair"] = min(max(state.get("errors_pair", 0) + delta, 0), count - 1)


def show_pair(pair: dict) -> None:
    """The pair's query and passage, query terms highlighted (escaped), with its document context."""
    query, text = pair.get("query"), pair.get("text")
    with st.container(border=True):
        st.caption(f"Query {md_escape(pair['query_id'])}")
        if query is None:
            st.caption("This query is not in the store.")
        else:
            show_text(query, language=language)
    with st.container(border=True):
        facts = [f"Passage {md_escape(pair['doc_id'])}"]
        if pair.get("rank") is not None:
            facts.append(f"rank {pair['rank']}, score {pair['score']:.4g}")
            facts.append("unjudged" if pair.get("label") is None else f"label {pair['label']}")
        if pair.get("run"):
            facts.append(f"run {md_escape(pair['run'])}")
        st.caption(" · ".join(facts))
        if text is None:
            st.caption("This passage is not in the store.")
            return
        if pair.get("title"):
            show_text(pair["title"], query=query, language=language, bold=True)
        show_text(text, query=query, language=language)
        if pair.get("document") is not None:
            where = "" if pair.get("position") is None else f", passage {pair['position'] + 1}"
            st.caption(f"Document {md_escape(pair['document'])}{where}")
    show_context(pair, query)


def show_context(pair: dict, query: str | None) -> None:
    """The passages before the pair's passage in its document, folded (DAPR's context)."""
    if pair.get("document") is None or not pair.get("position"):
        return
    with store.read() as session:
        earlier = earlier_chunks(session, info.name, pair["document"], pair["position"])
    if earlier:
        with st.expander(f"Document context: {len(earlier)} earlier passage{'s' * (len(earlier) != 1)}"):
            for pos, chunk in earlier:
                st.caption(f"Passage {pos + 1}")
                show_text(chunk, query=query, language=language)


def show_tag(tag: dict, text: str | None, where: str) -> None:
    """One tag with its evidence, and Confirm / Reject buttons."""
    who = f" · {md_escape(usernames.get(tag['user_id'], '?'))}" if tag["user_id"] is not None else ""
    source = "analyst"
    if tag["source"] == "auto":  # which detector made it: two may suggest one category
        source = f"detector {md_escape(evidence_detector(tag['evidence'], tag['category']) or '?')}"
    st.markdown(
        f"{STATUS_ICONS[tag['status']]} **{md_escape(names.get(tag['category'], tag['category']))}**  \n"
        f":small[{tag['status']} · {source}{who}]"
    )
    summary = evidence_summary(tag["evidence"], tag["category"])
    if summary:
        show_text(summary, small=True)
    if text and (spans := evidence_spans(tag["evidence"], len(text))):
        # marked_html escapes the text (pooljudge.ui.highlight.escape_text) for st.html
        st.html(
            f'<div style="{VERBATIM_STYLE}; font-size: 0.875rem">'
            f"{marked_html(text, spans, window=30, style=EVIDENCE_MARK)}</div>"
        )
    with st.container(horizontal=True):
        st.button(
            "Confirm",
            key=f"errors_{where}_confirm_{tag['id']}",
            on_click=decide,
            icon=":material/check:",
            args=(tag["id"], "confirmed", where),
            disabled=tag["status"] == "confirmed",
        )
        st.button(
            "Reject",
            key=f"errors_{where}_reject_{tag['id']}",
            on_click=decide,
            icon=":material/close:",
            args=(tag["id"], "rejected", where),
            disabled=tag["status"] == "rejected",
        )


def show_tags(tags: list[dict], text: str | None, where: str) -> None:
    """A pair's tags, each in its own box."""
    if not tags:
        st.caption("No tags on this pair yet.")
    for tag in tags:
        with st.container(border=True):
            show_tag(tag, text, where)


def pair_tags(qid: str, doc_id: str) -> list[dict]:
    return [t for t in all_tags if t["query_id"] == qid and t["doc_id"] == doc_id]


def category_label(cid: str) -> str:
    return f"{groups.get(cid, OWN_GROUP)} · {names.get(cid, cid)}"


# --------------------------------------------------------------------------- sample and tag


def draw_sample() -> None:
    """The run, k, N and seed, and the Sample button; a drawn sample goes to session state."""
    cols = st.columns([3, 1, 1, 1])
    run = cols[0].selectbox("Run", info.runs, key="errors_run", persist_state="page")
    k = int(
        cols[1].number_input(
            "k",
            min_value=1,
            max_value=1000,
            value=5,
            key="errors_k",
            persist_state="page",
            help="A query fails when none of its top k passages is relevant.",
        )
    )
    n = int(
        cols[2].number_input(
            "N",
            min_value=1,
            max_value=100_000,
            value=100,
            key="errors_n",
            persist_state="page",
            help="Failing queries to sample (all of them when fewer fail).",
        )
    )
    seed = int(
        cols[3].number_input("Seed", min_value=0, max_value=2**31 - 1, value=0, key="errors_seed", persist_state="page")
    )
    if not st.button(
        "Sample",
        type="primary",
        key="errors_sample_button",
        help="Draw the sample; nothing is stored until you suggest or add tags.",
    ):
        return
    qrels = source_qrels()
    if not qrels:
        st.warning(
            "No judgments in this qrels source yet: choose a frozen version."
            if source == LIVE
            else "This qrels version is empty."
        )
        return
    with store.read() as session:
        pairs = sample_error_pairs(session, info.name, run, qrels=qrels, k=k, n=n, level=level, seed=seed)
    failing = failing_queries(qrels, shared_run(store.url, info.name, run), k=k, level=level)
    state["errors_sample"] = {
        "collection": info.name,
        "run": run,
        "source": source,
        "k": k,
        "n": n,
        "level": level,
        "seed": seed,
        "judged": len(qrels),
        "failing": len(failing),
        "pairs": pairs,
    }
    state["errors_pair"] = 0


def sample_summary(drawn: dict) -> None:
    """The sample's counts and parameters, and the Suggest tags button."""
    pairs = drawn["pairs"]
    cols = st.columns(4)
    cols[0].metric(
        "Failing queries", f"{drawn['failing']:,}", help="Judged queries with no relevant passage in the top k"
    )
    cols[1].metric("Judged queries", f"{drawn['judged']:,}")
    cols[2].metric("Sampled queries", f"{len({p['query_id'] for p in pairs}):,}")
    cols[3].metric("Sampled pairs", f"{len(pairs):,}")
    st.caption(
        f"Run {md_escape(drawn['run'])} against {md_escape(drawn['source'])}: top {drawn['k']}, relevant "
        f"at grade ≥ {drawn['level']}, N = {drawn['n']}, seed {drawn['seed']}."
    )
    st.button(
        "Suggest tags",
        key="errors_suggest",
        on_click=suggest,
        args=(drawn["run"], pairs),
        disabled=not pairs,
        help="Run the detectors on every sampled pair and store their suggestions.",
    )
    show_flash("errors_sample")


def tag_sampled_pairs(drawn: dict) -> None:
    """Step through the sampled pairs: each one's texts beside its tags and the forms that add tags."""
    pairs = drawn["pairs"]
    st.subheader("Tag each pair")
    if not 0 <= state.get("errors_pair", 0) < len(pairs):
        state["errors_pair"] = 0
    tagged = {(t["query_id"], t["doc_id"]) for t in all_tags if t["status"] == "confirmed"}
    done = sum((p["query_id"], p["doc_id"]) in tagged for p in pairs)
    st.progress(done / len(pairs), text=f"{done} of {len(pairs)} pairs have a confirmed tag")
    prev, chooser, after = st.columns([1, 6, 1], vertical_alignment="bottom")
    index = state["errors_pair"]
    prev.button(
        "Prev",
        key="errors_prev",
        on_click=step,
        args=(-1, len(pairs)),
        disabled=index == 0,
        icon=":material/arrow_back:",
        width="stretch",
    )
    after.button(
        "Next",
        key="errors_next",
        on_click=step,
        args=(1, len(pairs)),
        disabled=index == len(pairs) - 1,
        icon=":material/arrow_forward:",
        icon_position="right",
        width="stretch",
    )
    index = chooser.selectbox(
        "Pair",
        range(len(pairs)),
        key="errors_pair",
        format_func=lambda i: (
            f"{i + 1} of {len(pairs)} · query {pairs[i]['query_id']} · rank {pairs[i]['rank']}"
            f" · passage {pairs[i]['doc_id']}"
        ),
    )
    pair = pairs[index]
    text_column, tag_column = st.columns([3, 2])
    with text_column:
        show_pair(pair)
    with tag_column:
        st.markdown("**Tags**")
        show_flash("errors_pair")
        show_tags(pair_tags(pair["query_id"], pair["doc_id"]), pair.get("text"), "pair")
        add_tags_form(pair, drawn["run"])
        define_form()


def add_tags_form(pair: dict, run: str) -> None:
    with st.form("errors_tag_form", border=True):
        st.multiselect(
            "Add categories",
            [c.id for c in categories],
            key="errors_new_tags",
            format_func=category_label,
            placeholder="Choose error categories",
        )
        st.text_input("Note (optional)", key="errors_note")
        st.form_submit_button(
            "Add tags", key="errors_add_tags", on_click=add_tags, args=(pair["query_id"], pair["doc_id"], run)
        )


def define_form() -> None:
    """A form that stores a new category of the collection's own."""
    with st.expander("Define a category of your own"):
        show_flash("errors_define")
        with st.form("errors_define_form", border=False):
            st.text_input(
                "Id",
                key="errors_new_id",
                placeholder="e.g. outdated_answer",
                help="Lowercase letters, digits and _; what the tags that use it store.",
            )
            st.text_input("Name", key="errors_new_name", placeholder="e.g. Outdated answer")
            st.text_area(
                "Description (optional)",
                key="errors_new_description",
                height=68,
                placeholder="e.g. The passage answered the question once, no longer.",
            )
            st.form_submit_button("Add category", key="errors_define", on_click=define_category)
        if own:
            st.caption(
                "Your categories: "
                + ", ".join(f"{md_escape(v)} ({md_escape(c)})" for c, v in own.items())
                + ". Rename or delete them on the Categories tab."
            )


def sample_tab() -> None:
    if not info.runs:
        st.info("This collection has no runs yet: run a retriever or import a run first.")
    else:
        draw_sample()
    drawn = state.get("errors_sample")
    drawn = drawn if drawn is not None and drawn["collection"] == info.name else None
    if drawn is not None:
        sample_summary(drawn)
        if drawn["pairs"]:
            tag_sampled_pairs(drawn)
        else:
            st.success("No judged query fails at this cut-off: nothing to tag.")
    with st.expander("Category descriptions"):
        st.dataframe(
            pd.DataFrame(
                [
                    {"group": groups[c.id], "category": c.name, "id": c.id, "description": descriptions[c.id]}
                    for c in categories
                ]
            ),
            hide_index=True,
            width="stretch",
            key="errors_taxonomy",
        )


# --------------------------------------------------------------------------- dashboards


def distribution_section() -> None:
    st.subheader("Error categories")
    include = st.checkbox(
        "Include suggested tags",
        key="errors_include_suggested",
        persist_state="page",
        help="Count detector suggestions not yet confirmed or rejected as well.",
    )
    with store.read() as session:
        distribution = category_distribution(
            session, info.name, statuses=("confirmed", "suggested") if include else ("confirmed",)
        )
    if not distribution:
        st.caption("No tags to count yet: sample a run and tag its pairs.")
        return
    distribution_chart(distribution, names, groups, include)


def metric_section() -> None:
    st.subheader("Metric per error category")
    measure = st.selectbox("Measure", MEASURE_CHOICES, key="errors_measure", persist_state="page")
    qrels = source_qrels()
    if not info.runs:
        st.caption("This collection has no runs yet.")
        return
    if not qrels:
        st.caption("No judgments in this qrels source yet." if source == LIVE else "This qrels version is empty.")
        return
    with store.read() as session:
        by_query = query_categories(session, info.name)
        qrels_key = (source, activity_marker(session, info.name) if source == LIVE else None)
    per_run = {run: per_query_values(store.url, info.name, run, measure, level, qrels_key, qrels) for run in info.runs}
    metric_chart(per_run, by_query, names, measure, info.runs)
    st.caption(
        f"Every judged query of {md_escape(source)} is evaluated (0 where a run misses it, as trec_eval -c); "
        "a query counts in each category of its confirmed tags; untagged queries have none. "
        + level_caption(level, info.relevance_level)
    )


def examples_section() -> None:
    st.subheader("Examples")
    present = [c.id for c in categories if any(t["category"] == c.id for t in all_tags)]
    left, right = st.columns(2)
    chosen_categories = left.multiselect(
        "Categories",
        present,
        format_func=category_label,
        key="errors_filter_categories",
        placeholder="All categories",
        persist_state="page",
    )
    chosen_statuses = right.multiselect(
        "Statuses",
        list(STATUSES),
        default=["confirmed", "suggested"],
        key="errors_filter_statuses",
        placeholder="All statuses",
        persist_state="page",
    )
    shown = [
        t
        for t in all_tags
        if (not chosen_categories or t["category"] in chosen_categories)
        and (not chosen_statuses or t["status"] in chosen_statuses)
    ]
    if not shown:
        st.caption("No tags match.")
        show_flash("errors_drill")
        return
    pair_of = tagged_pairs(shown)
    examples_table(shown, pair_of, names, usernames)
    drill_down(shown, pair_of)


def tagged_pairs(shown: list[dict]):
    """A function from a tag to its pair with texts: from the sample when it holds the pair, else the store."""
    known = {(p["query_id"], p["doc_id"]): p for p in (sample["pairs"] if sample else [])}
    missing = [t for t in shown if (t["query_id"], t["doc_id"]) not in known]
    query_texts, passages = lookup_texts(
        store.url,
        info.name,
        tuple(sorted({t["query_id"] for t in missing})),
        tuple(sorted({t["doc_id"] for t in missing})),
    )

    def pair_of(tag: dict) -> dict:
        key = (tag["query_id"], tag["doc_id"])
        if key in known:
            return {**known[key], "run": tag["run"]}
        return {
            "query_id": tag["query_id"],
            "doc_id": tag["doc_id"],
            "query": query_texts.get(tag["query_id"]),
            "run": tag["run"],
            **passages.get(tag["doc_id"], {"text": None}),
        }

    return pair_of


def drill_down(shown: list[dict], pair_of) -> None:
    """One tag's pair in full with all its tags, which can be confirmed or rejected from here."""
    st.subheader("Drill-down")
    by_id = {t["id"]: t for t in shown}
    if state.get("errors_drill") not in by_id:
        state.pop("errors_drill", None)
    chosen = st.selectbox(
        "Tag",
        list(by_id),
        key="errors_drill",
        format_func=lambda i: (
            f"#{i} · query {by_id[i]['query_id']} · passage {by_id[i]['doc_id']} · "
            f"{names.get(by_id[i]['category'], by_id[i]['category'])} ({by_id[i]['status']})"
        ),
    )
    pair = pair_of(by_id[chosen])
    text_column, tag_column = st.columns([3, 2])
    with text_column:
        show_pair(pair)
    with tag_column:
        st.markdown("**All tags on this pair**")
        show_flash("errors_drill")
        show_tags(pair_tags(pair["query_id"], pair["doc_id"]), pair.get("text"), "drill")


def dashboards_tab() -> None:
    distribution_section()
    metric_section()
    examples_section()


# --------------------------------------------------------------------------- the collection's own categories


def categories_tab() -> None:
    """The collection's own categories: how many tags use each; rename or delete one (unused only)."""
    show_flash("errors_categories")
    if not stored:
        st.caption("This collection has no categories of its own yet: define one while tagging a pair.")
        return
    used = {key: sum(t["category"] == key for t in all_tags) for key in stored}
    own_categories_table(stored, used)
    key = st.selectbox("Category", list(stored), key="errors_manage", format_func=lambda k: f"{stored[k].name} ({k})")
    with st.form("errors_rename_form"):
        # one field per category (its key in the widget key): choosing another starts at that one's text
        st.text_input("Name", value=stored[key].name, key=f"errors_rename_name::{key}")
        st.text_area("Description", value=stored[key].description, key=f"errors_rename_description::{key}", height=68)
        st.form_submit_button("Rename", key="errors_rename", on_click=rename_category, args=(key,))
    st.button(
        "Delete",
        key="errors_delete",
        on_click=delete_category,
        args=(key,),
        icon=":material/delete:",
        disabled=used[key] > 0,
        help="Only a category no tag uses can go." if used[key] else "Delete this category.",
    )


# Only the open tab runs (on_change="rerun" makes .open tell which); the URL names it (?errors_tab=Dashboards), so a
# reload or a shared link opens the same tab.  persist_state="page" keeps a tab's choices while another is open.
TABS = {"Sample and tag": sample_tab, "Dashboards": dashboards_tab, "Categories": categories_tab}
TABS["Lexicon"] = lambda: lexicon_tab(store, info.name, account.role)
TABS["Alignment"] = lambda: alignment_tab(store, info)
for tab, draw in zip(st.tabs(list(TABS), key="errors_tab", on_change="rerun", bind="query-params"), TABS.values()):
    if tab.open:
        with tab:
            draw()
