"""Import a collection, qrels or runs from a path on the server."""

import pandas as pd
import streamlit as st
from core.errors import FormatError
from core.formats import FORMATS, read_source
from db.importer import ImportConflict, import_collection
from db.queries import import_history
from pooljudge.ui.common import get_store, md_escape
from pooljudge.ui.auth import require_role

require_role("admin")
st.title("Import")
st.caption(
    "Reads a file or folder on the machine running pooljudge, in one transaction: "
    "on any error nothing is imported. Large corpora import faster with `pooljudge import`."
)

store = get_store()
with st.form("import"):
    path = st.text_input("Path (file or folder, plain or .gz)", placeholder="/data/my-collection")
    fmt = st.selectbox("Format", sorted(FORMATS), format_func=lambda name: f"{name}: {FORMATS[name].help}")
    name = st.text_input("Collection name")
    merge = st.checkbox("Merge into an existing collection (add what is new, refuse conflicts)")
    qrels_name = st.text_input("Qrels version name", value="imported")
    submitted = st.form_submit_button("Import", type="primary")

if submitted:
    if not path.strip() or not name.strip():
        st.error("Give both a path and a collection name.")
    else:
        bar = st.progress(0.0, text="Reading...")
        seen = {"n": 0}

        def progress(part: str, n: int) -> None:
            seen["n"] += n
            bar.progress(min(0.99, seen["n"] / (seen["n"] + 5_000)), text=f"Importing {part}: {seen['n']:,} records")

        try:
            with store.write() as session:
                summary = import_collection(
                    session, read_source(fmt, path.strip()), name=name.strip(), format=fmt,
                    location=path.strip(), mode="merge" if merge else "create", qrels_name=qrels_name.strip() or "imported",
                    progress=progress,
                )
        except (FormatError, ImportConflict, ValueError) as exc:
            bar.empty()
            st.error(f"Nothing was imported. {md_escape(str(exc))}", icon=":material/error:")
        else:
            bar.progress(1.0, text="Done")
            s = summary.as_dict()
            st.success(
                f"Imported {s['passages_added']:,} passages, {s['queries_added']:,} queries, "
                f"{s['qrels_added']:,} qrels entries and {len(s['runs'])} runs."
            )

st.subheader("Import history")
with store.read() as session:
    history = import_history(session)
if history:
    st.dataframe(pd.DataFrame(history), hide_index=True, width="stretch")
else:
    st.caption("No imports yet.")
