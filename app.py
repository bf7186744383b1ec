"""pooljudge: the Streamlit entry point.  Run with ``streamlit run app.py`` (or ``make run``).

Navigation is declared here with ``st.navigation`` (the one mechanism the app
uses); each page lives in ``pages/`` and reads like a description of its
screen.
"""

import streamlit as st

st.set_page_config(page_title="pooljudge", page_icon=":material/fact_check:", layout="wide")

navigation = st.navigation(
    [
        st.Page("pages/home.py", title="Collections overview", icon=":material/home:", default=True),
        st.Page("pages/collections.py", title="Import", icon=":material/upload:"),
    ]
)
navigation.run()
