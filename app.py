"""pooljudge: the Streamlit entry point.  Served by ``streamlit run serve.py`` (or ``make run``).

Navigation is declared here with ``st.navigation``, the one mechanism the app
uses, so that the set of pages depends on who is logged in: an annotator is
offered only the annotation page.  Every page also checks the role itself on
every run (``pooljudge.ui.auth.require_role``).  The page scripts live in
``views/``, not ``pages/``: Streamlit auto-discovers a ``pages/`` folder and,
on a server's first request, serves a deep link such as ``/pooling`` straight
from it, skipping this entry point.
"""

import streamlit as st

from db.vocab import Role
from pooljudge.ui.auth import (
    current_account,
    login_form,
    logout,
    remember_requested_page,
    sync_cookie,
    take_requested_page,
)
from pooljudge.ui.common import carry_collection, get_store, md_escape
from pooljudge.ui.script_control import stop_run
from pooljudge.ui.setup import first_admin_form, has_users

st.set_page_config(page_title="pooljudge", page_icon=":material/fact_check:", layout="wide")

PAGES = {
    "home": st.Page("views/home.py", title="Collections overview", icon=":material/home:", default=True),
    "import": st.Page("views/import_collections.py", title="Import", icon=":material/upload:"),
    "pooling": st.Page("views/pooling.py", title="Pooling", icon=":material/merge:"),
    "runs": st.Page("views/runs.py", title="Runs and export", icon=":material/download:"),
    "metrics": st.Page("views/metrics.py", title="Metrics", icon=":material/leaderboard:"),
    "statistics": st.Page("views/dataset_statistics.py", title="Dataset statistics", icon=":material/bar_chart:"),
    "simulation": st.Page("views/labelling_simulation.py", title="Labelling simulation", icon=":material/insights:"),
    "errors": st.Page("views/errors.py", title="Error analysis", icon=":material/bug_report:"),
    "annotate": st.Page("views/annotate.py", title="Annotate", icon=":material/edit_note:"),
    "review": st.Page("views/review.py", title="Review", icon=":material/rule:"),
    "admin": st.Page("views/admin.py", title="Admin", icon=":material/admin_panel_settings:"),
    "manage": st.Page("views/manage.py", title="Manage", icon=":material/inventory_2:"),
    "models": st.Page("views/models.py", title="Models", icon=":material/model_training:"),
}
BY_ROLE: dict[str, list[str]] = {
    Role.ADMIN: [
        "home",
        "import",
        "pooling",
        "runs",
        "metrics",
        "errors",
        "statistics",
        "annotate",
        "review",
        "admin",
        "simulation",
        "manage",
        "models",
    ],
    Role.REVIEWER: ["home", "annotate", "review", "metrics", "errors", "statistics", "simulation", "runs"],
    Role.ANNOTATOR: ["annotate"],
}

store = get_store()
account = current_account()  # validates the session (cookie after a reload) against the store
sync_cookie()  # a session cookie written or deleted at login/logout, until the browser confirms
if account is None:
    if has_users(store):
        # which page the URL asks for (no menu is shown, the page does not run): the login goes on there
        remember_requested_page(st.navigation(list(PAGES.values()), position="hidden"))
        login_form()
    else:
        first_admin_form()
    stop_run()

pages = [PAGES[name] for name in BY_ROLE[account.role]]
if account.role == Role.ANNOTATOR:
    pages[0] = st.Page("views/annotate.py", title="Annotate", icon=":material/edit_note:", default=True)
with st.sidebar:
    # the username is untrusted text: escaped, so Markdown in it (links, images) shows literally
    st.caption(f"Logged in as **{md_escape(account.username)}** ({account.role})")
    if st.button("Log out", key="logout"):
        logout()
current = st.navigation(pages, expanded=True)  # an admin's 13 pages: none hidden behind 'View more'
requested = take_requested_page()
if requested is not None:
    path, params = requested
    # only a page this role is offered: an annotator's deep link to /review still lands on Annotate
    wanted = next((p for p in pages if p.url_path == path), None)
    if wanted is not None and wanted.url_path != current.url_path:
        st.switch_page(wanted, query_params=params)
carry_collection(store)  # pages without a collection box keep the choice (and the URL shows it)
current.run()
