"""Home: every collection with DuReader-retrieval Table 3 style statistics per split."""

import pandas as pd
import streamlit as st

from db.queries import corpus_statistics, list_collections, relevance_levels, split_statistics, statistics_marker
from db.vocab import Role
from pooljudge.ui.auth import require_role
from pooljudge.ui.common import (
    blank_missing,
    chosen_version,
    describe_version,
    fmt_float,
    get_store,
    md_escape,
    qrels_summaries,
)
from pooljudge.ui.highlight import show_text

require_role(Role.ADMIN, Role.REVIEWER)
st.title("pooljudge")
st.caption(
    "Pool candidates from several retrievers, grade them blind on a 4-level scale, watch trec_eval-exact metrics."
)

store = get_store()


@st.cache_data(show_spinner="Computing statistics...")
def statistics(store_url: str, marker: tuple, levels: tuple, versions: tuple):
    # Aggregates over every passage: recomputed only when an import or a new qrels version
    # changed what they count (``marker``), a collection's relevance level changed (``levels``) or another
    # qrels version was picked (``versions``), not on every rerun.
    chosen = dict(versions)
    with store.read() as session:
        collections = list_collections(session)
        return collections, {
            c.name: (
                corpus_statistics(session, c.name),
                split_statistics(session, c.name, version=chosen.get(c.name), level=c.relevance_level),
            )
            for c in collections
        }


with store.read() as session:
    marker, levels = statistics_marker(session), relevance_levels(session)
    listed = list_collections(session)
# the version each collection's judgment counts come from: the one picked last on Dataset statistics, else the
# imported one, never silently the newest freeze (pooljudge.ui.common.default_version)
versions = {info.name: chosen_version(store, info) for info in listed}
collections, details = statistics(store.url, marker, levels, tuple(sorted(versions.items())))

if not collections:
    st.info("The store is empty. Import a collection on the **Import** page or with `pooljudge import`.")

for info in collections:
    corpus, splits = details[info.name]
    with st.container(border=True):
        st.subheader(md_escape(info.name))
        show_text(info.description)  # verbatim, as imported (nothing when empty)
        cols = st.columns(5)
        cols[0].metric("Passages", f"{corpus['passages']:,}")
        cols[1].metric("Documents", f"{corpus['documents']:,}")
        cols[2].metric("Queries", f"{info.queries:,}")
        cols[3].metric("Avg passage chars", fmt_float(corpus["avg_passage_chars"]))
        cols[4].metric("Language", md_escape(info.language or "?"))  # a metric's value is Markdown
        table = pd.DataFrame(
            [
                {
                    "split": s.split,
                    "queries": s.queries,
                    "judged queries": s.judged_queries,
                    "judged pairs": s.judged_pairs,
                    "relevant passages": s.relevant_passages,
                    "relevant / query": round(s.avg_relevant_per_query, 2),
                    "avg query chars": round(s.avg_query_chars, 1),
                    "avg relevant passage chars": (
                        None if s.avg_relevant_passage_chars is None else round(s.avg_relevant_passage_chars, 1)
                    ),
                }
                for s in splits
            ]
        )
        st.dataframe(blank_missing(table), hide_index=True, width="stretch")
        st.caption(
            f"Relevant = grade ≥ {info.relevance_level} (the collection's level) in "
            + (
                f"qrels version {describe_version(qrels_summaries(store, info)[versions[info.name]], markdown=True)}"
                " (pick another on Dataset statistics)"
                if versions.get(info.name)
                else "no qrels version (none yet)"
            )
            + ". Runs: "
            + (", ".join(md_escape(r) for r in info.runs) or "none")
        )
