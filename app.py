"""pooljudge: the Streamlit entry point.  Run with ``streamlit run app.py`` (or ``make run``).

Navigation is declared here with ``st.navigation``, the one mechanism the app
uses, so that the set of pages can depend on who is logged in.  The page
scripts live in ``views/``, not ``pages/``: Streamlit auto-discovers a
``pages/`` folder and, on a server's first request, serves a deep link such as
``/pooling`` straight from it, skipping this entry point (and any check made
here).
"""

import streamlit as st

st.set_page_config(page_title="pooljudge", page_icon=":material/fact_check:", layout="wide")

navigation = st.navigation(
    [
        st.Page("views/home.py", title="Collections overview", icon=":material/home:", default=True),
        st.Page("views/collections.py", title="Import", icon=":material/upload:"),
        st.Page("views/pooling.py", title="Pooling", icon=":material/merge:"),
        st.Page("views/runs.py", title="Runs and export", icon=":material/download:"),
    ]
)
navigation.run()
